"""`cudalens profile`, session 4: the X4 read-back pattern (``loss.item()``), child processes, and the
lazily loaded CLI.

The read-back fixtures are raw traces recorded on an H100 (tests/fixtures/profile/, from
benchmarks/profile/profile_gpu.py and benchmarks/profile/profile_gpu_vs_ncu.py): a PyTorch training step that reads its
loss back every step (two captures, from two sessions), and a CuPy program that reads 16 floats back
every iteration.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from cudalens.trace.app import children_notes
from cudalens.trace.assess import app_facts, findings
from cudalens.trace.readback import loop_read_backs, read_backs
from cudalens.trace.records import parse, parse_file
from cudalens.trace.run import _child_traces, child_trace_files

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "profile"
TORCH = FIX / "h100_torch_train.tsv"
TORCH_S4 = FIX / "h100_torch_train_s4.tsv"  # a second capture (session 4, benchmarks/profile/profile_gpu_vs_ncu.py)
CUPY = FIX / "h100_cupy_rawkernel.tsv"
TRANSPOSE = FIX / "h100_transpose.tsv"


# ------------------------------------------------------------------------------------ read-backs


@pytest.mark.parametrize("fixture", [TORCH, TORCH_S4], ids=["session3", "session4"])
def test_torch_item_per_step_is_found_with_its_measured_cost(fixture):
    trace = parse_file(str(fixture))
    found = read_backs(trace)
    steps = [r for r in trace.ranges if r.name.startswith("step")]
    assert len(found) == len(steps) == 20  # one loss.item() per step
    assert {r.copy.bytes for r in found} == {4} and {r.sync.name.split("_v")[0] for r in found} == \
        {"cudaStreamSynchronize"}
    for r in found:  # each read-back lies inside its step's NVTX range
        assert any(s.start_ns <= r.copy.start_ns <= s.end_ns for s in steps)
    # the cost: GPU idle from each copy's end to the next GPU work, recomputed from the records
    starts = sorted(s for s, _ in trace.gpu_records)
    expect = sum(min((s for s in starts if s > r.copy.end_ns), default=r.copy.end_ns) - r.copy.end_ns
                 for r in found)
    assert sum(r.gpu_idle_ns for r in found) == expect > 0
    facts = app_facts(trace)
    (f,) = [f for f in findings(trace, facts, "train.py") if f.rule == "X4"]
    assert "20 read-backs of 4 B" in f.message and "cudaStreamSynchronize" in f.message
    assert f.impact == pytest.approx(expect * 1e-9 / facts.span_s)


def test_cupy_small_get_per_iteration_is_a_read_back():
    trace = parse_file(str(CUPY))
    found = read_backs(trace)
    assert len(found) == 30 and {r.copy.bytes for r in found} == {64}  # out[:16].get(), 30 iterations
    assert loop_read_backs(trace) and app_facts(trace).span_s


def test_no_read_back_without_a_synchronize_or_in_a_large_or_lone_copy():
    trace = parse_file(str(TORCH))
    no_sync = dataclasses.replace(trace, api=tuple(a for a in trace.api if "ynchronize" not in a.name))
    assert read_backs(no_sync) == []
    big = dataclasses.replace(trace, copies=tuple(dataclasses.replace(c, bytes=1 << 20) for c in trace.copies))
    assert read_backs(big) == []
    found = read_backs(trace)
    one = dataclasses.replace(trace, copies=tuple(c for c in trace.copies if c is found[0].copy or c.kind != "DtoH"))
    assert len(read_backs(one)) == 1 and loop_read_backs(one) == ()
    # transpose copies synchronously (cudaMemcpy, no async flag): the synchronous form of X4, not this one
    assert read_backs(parse_file(str(TRANSPOSE))) == []


def test_a_kernel_launched_before_the_synchronize_breaks_the_pattern():
    text = "\n".join([
        "#cudalens-trace\t1\tx",
        *[line for i in range(4) for line in (
            f"K\t{1000 + i * 100}\t{1050 + i * 100}\t0\t7\t{10 * i + 1}\t1\t1\t1\t32\t1\t1\t16\t0\t0\t0\t0\tk",
            f"C\t{1060 + i * 100}\t{1062 + i * 100}\t0\t7\t{10 * i + 2}\t2\t3\t2\t4\t1",
            f"A\t{1060 + i * 100}\t{1061 + i * 100}\t{10 * i + 2}\t41\t0\tcudaMemcpyAsync_v3020",
            (f"K\t{1070 + i * 100}\t{1080 + i * 100}\t0\t7\t{10 * i + 3}\t1\t1\t1\t32\t1\t1\t16\t0\t0\t0\t0\tk"
             if i % 2 else "I\tnote\t-"),
            f"A\t{1063 + i * 100}\t{1090 + i * 100}\t{10 * i + 4}\t131\t0\tcudaStreamSynchronize_v3020")],
        "I\tend\t1", ""])
    found = read_backs(parse(text))
    assert [r.copy.correlation for r in found] == [2, 22]  # 12 and 32 had a launch (13, 33) before the sync
    assert found[0].gpu_idle_ns == 1100 - 1062  # copy end -> next kernel start


# ------------------------------------------------------------------------------------ child processes


def test_child_watch_counts_subprocess_multiprocessing_and_fork(tmp_path):
    """The audit hook the Python collector installs (in a fresh interpreter: hooks cannot be removed)."""
    script = tmp_path / "spawner.py"
    script.write_text(
        "import multiprocessing as mp, os, subprocess, sys\n"
        "from cudalens.trace._pyrun import ChildWatch\n"
        "def f():\n    pass\n"
        "if __name__ == '__main__':\n"
        "    w = ChildWatch(); sys.addaudithook(w)\n"
        "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
        "    n1 = w.count\n"
        "    p = mp.get_context('spawn').Process(target=f); p.start(); p.join()\n"
        "    n2 = w.count\n"
        "    os.system('true')\n"
        "    print(n1, n2 > n1, w.count - n2, w.commands[0])\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120,
                         check=True).stdout.split()
    assert out[0] == "1" and out[1] == "True" and out[2] == "1"
    assert out[3] == sys.executable and out[4:] == ["-c", "pass"]


def test_children_notes_say_what_was_not_traced():
    trace = parse("#cudalens-trace\t1\tcupti-python\nI\tchildren\t2\nI\tchild_commands\tpython worker.py\nI\tend\t1\n")
    (line,) = children_notes(trace, ())
    assert "started 2 child process(es)" in line and "python worker.py" in line and "not traced" in line
    assert children_notes(parse("#cudalens-trace\t1\tx\nI\tend\t1\n"), ()) == []
    child = parse_file(str(TRANSPOSE))
    (line,) = children_notes(parse("#cudalens-trace\t1\tinjection\nI\tend\t1\n"), (child,))
    assert f"1 more process(es) started by the program also used CUDA ({len(child.kernels)} kernel launches)" in line


def test_child_trace_files_are_found_beside_the_trace(tmp_path):
    out = tmp_path / "trace.tsv"
    out.write_text("#cudalens-trace\t1\tinjection\nI\tend\t1\n")
    (tmp_path / "trace.tsv.4242").write_text(TRANSPOSE.read_text())
    (tmp_path / "trace.tsv.99").write_text("not a trace\n")  # a child killed mid-write: skipped
    (tmp_path / "trace.tsv.bak").write_text("x")
    assert [Path(p).name for p in child_trace_files(str(out))] == ["trace.tsv.4242", "trace.tsv.99"]
    (child,) = _child_traces(str(out))
    assert len(child.kernels) == len(parse_file(str(TRANSPOSE)).kernels)


def test_injection_library_gives_a_child_its_own_file():
    """inject.c: the first process creates the trace exclusively; a later one writes TRACE.PID."""
    source = (ROOT / "src" / "cudalens" / "trace" / "inject.c").read_text()
    assert 'fopen(path, "wx")' in source and '"%s.%d", path, (int)getpid()' in source


# ------------------------------------------------------------------------------------ lazy CLI


def test_command_table_matches_what_the_modules_register():
    import pkgutil

    import cudalens.cli as cli_pkg

    registered = {}
    for info in pkgutil.iter_modules(cli_pkg.__path__):
        if not info.name.startswith("_"):
            registered.update({name: info.name for name in cli_pkg.registered_by(info.name)})
    assert registered == cli_pkg.COMMANDS


def test_profile_loads_only_its_own_command_module():
    code = ("import sys\nfrom cudalens.cli import main\nrc = main(['profile', '--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('cudalens.cli.')))\n"
            "print(sorted(m for m in ('numpy', 'tree_sitter', 'rich', 'cuda.bindings') if m in sys.modules))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                         check=True).stdout.strip().splitlines()
    assert out[-2] == "['cudalens.cli._build', 'cudalens.cli._common', 'cudalens.cli.profile']" and out[-1] == "[]"


def test_every_command_still_lists_and_resolves(capsys):
    from cudalens.cli import COMMANDS, cli, main

    assert main(["--help"]) == 0
    listing = capsys.readouterr().out
    ctx = click.Context(cli)
    for name in COMMANDS:
        assert f"  {name} " in listing
        cmd = cli.get_command(ctx, name)
        assert cmd is not None and cmd.name == name
    assert cli.get_command(ctx, "no-such-command") is None
    assert main(["lab", "--help"]) == 0 and "experiments" in capsys.readouterr().out
