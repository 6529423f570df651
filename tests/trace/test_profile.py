"""`cudalens profile`: trace parsing, trace-to-findings on traces recorded on an H100, the report
schema, renderers, and the error paths (no GPU, no driver, a crash, no kernel).

The fixtures under tests/fixtures/profile/ are raw traces written by the collectors on an H100
(benchmarks/profile/profile_gpu.py; results in benchmarks/results/h100/profile/).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest

from cudalens.cli import main
from cudalens.errors import InputError, NoDeviceError
from cudalens.trace import assess
from cudalens.trace.app import Options, ProgramFailed, check_run, report_from_trace
from cudalens.trace.kernels import sources_in_python
from cudalens.trace.records import parse, parse_file
from cudalens.trace.run import TracedRun, command_for, is_python_program

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "profile"
TORCH = FIX / "h100_torch_train.tsv"
CUPY = FIX / "h100_cupy_rawkernel.tsv"
CUPY_PY = ROOT / "examples" / "profile" / "cupy_rawkernel.py"
SCHEMA = ROOT / "src" / "cudalens" / "data" / "profile-1.schema.json"
DEVICE = {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "sm_count": 132, "link": "PCIe 5 x16",
          "link_gbps": 63.015}


@pytest.fixture(scope="module")
def _shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _cache(_shared_cache, monkeypatch):
    """One compile cache for this module's tests (never the user's home)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(_shared_cache))
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(_shared_cache / "cudalens"))


def _report(fixture: Path, argv: list[str], **opts) -> dict:
    return report_from_trace(parse_file(str(fixture)), argv, Options(cc="9.0", **opts), device=dict(DEVICE))


# ------------------------------------------------------------------------------------ records


def test_parse_pairs_nvtx_ranges_and_decodes_copies():
    text = "\n".join([
        "#cudalens-trace\t1\tinjection",
        "C\t100\t300\t0\t7\t1\t1\t1\t3\t4096\t0",
        "C\t400\t450\t0\t7\t2\t2\t3\t2\t64\t1",
        "M\t50\t9\t2\tdom\tstep 0",
        "M\t500\t9\t4\tdom\t",
        "K\t310\t390\t0\t7\t3\t4\t1\t1\t256\t1\t1\t32\t0\t128\t0\t0\t_Z6kernelPf",
        "I\tend\t1",
    ])
    t = parse(text)
    assert t.collector == "injection" and t.complete
    assert [(c.kind, c.host_side, c.is_async) for c in t.copies] == [("HtoD", "pageable", False), ("DtoH", "pinned", True)]
    assert [(r.name, r.end_ns - r.start_ns) for r in t.ranges] == [("step 0", 450)]
    assert t.kernels[0].threads_per_block == 256 and t.kernels[0].dynamic_shared == 128
    assert assess.kernel_base_name(t.kernels[0].name) == "kernel"


@pytest.mark.parametrize("text, needle", [
    ("K\t1\t2\n", "not a cudalens trace"),
    ("#cudalens-trace\t9\tx\n", "format"),
    ("#cudalens-trace\t1\tx\nK\ta\tb\tc\td\te\tf\tg\th\ti\tj\tk\tl\tm\tn\to\tp\tname\n", ":2"),
    ("#cudalens-trace\t1\tx\nZ\t1\n", ":2: not a trace record"),
])
def test_parse_rejects_bad_traces_naming_the_line(text, needle):
    with pytest.raises(InputError, match=needle):
        parse(text, source="t.tsv")


# ------------------------------------------------------------------ facts from the H100 traces


def test_torch_trace_facts_sum_the_records():
    trace = parse_file(str(TORCH))
    facts = assess.app_facts(trace, link_gbps=63.0, link="PCIe 5 x16")
    assert facts.launches == len(trace.kernels) == 798
    assert facts.window.startswith("NVTX ranges (20)")  # one range per training step
    assert sum(k.share for k in facts.kernels) == pytest.approx(1.0)
    assert facts.kernel_s == pytest.approx(sum(k.duration_ns for k in trace.kernels) * 1e-9)
    # the three GEMM kernels of fwd/bwd lead; each share is its summed duration over all kernel time
    top = facts.kernels[0]
    mine = [k for k in trace.kernels if k.name == top.symbol]
    assert top.total_s == pytest.approx(sum(k.duration_ns for k in mine) * 1e-9)
    assert top.launches == len(mine) == 60
    assert 0 < facts.busy_share < 1 and facts.idle_s == pytest.approx(facts.span_s - facts.busy_s)
    # Amdahl on the assessed span: 2x faster on a kernel with share p gives 1/((1-p)+p/2)
    p = top.span_share
    assert top.amdahl_2x == pytest.approx(1 / ((1 - p) + p / 2))
    assert [r["name"] for r in facts.ranges] == ["step"]


def test_busy_time_is_the_union_of_overlapping_work():
    text = "\n".join(["#cudalens-trace\t1\tx",
                      "K\t0\t100\t0\t7\t1\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\t0\ta",
                      "K\t50\t150\t0\t8\t2\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\t0\tb",
                      "K\t200\t300\t0\t7\t3\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\t0\ta"])
    facts = assess.app_facts(parse(text))
    assert facts.span_s == pytest.approx(300e-9) and facts.busy_s == pytest.approx(250e-9)
    assert facts.kernel_s == pytest.approx(300e-9)


def test_cupy_trace_findings_name_the_transfers_and_top_kernels():
    r = _report(CUPY, [sys.executable, str(CUPY_PY)], defines=(("cols", 1024), ("rows", 8192)))
    rules = [f["rule"] for f in r["findings"]]
    assert r["kernels"][0]["name"] == "column_sum" and r["kernels"][1]["name"] == "row_scale"
    assert {"X1", "X2", "X3"} <= set(rules)
    x1 = next(f for f in r["findings"] if f["rule"] == "X1")
    assert x1["impact"] > 0 and "between kernel launches" in x1["message"]
    # the uncoalesced load is found on the RawKernel's own line in the .py file
    src = CUPY_PY.read_text().splitlines()
    located = [f for f in r["findings"] if f["kernel"] == "column_sum" and f.get("line")]
    strided = [f for f in located if "stride" in f["message"]]
    assert strided, [f["message"] for f in located]
    assert strided[0]["file"] == str(CUPY_PY)
    assert "m[r * cols + c]" in src[strided[0]["line"] - 1]


def test_sources_in_python_keep_the_files_line_numbers(tmp_path):
    found = {s.kernel: s for s in sources_in_python(str(CUPY_PY))}
    assert set(found) == {"column_sum", "row_scale"}
    s = found["column_sum"]
    lines = CUPY_PY.read_text().splitlines()
    offset = s.text.splitlines().index(next(ln for ln in s.text.splitlines() if "column_sum" in ln))
    assert "column_sum" in lines[s.first_line - 1 + offset]


def test_no_transfer_findings_without_copies():
    text = "\n".join(["#cudalens-trace\t1\tx"] + [
        f"K\t{i * 1000}\t{i * 1000 + 900}\t0\t7\t{i}\t1024\t1\t1\t256\t1\t1\t32\t0\t0\t0\t0\tk" for i in range(10)])
    trace = parse(text)
    facts = assess.app_facts(trace)
    rules = {f.rule for f in assess.findings(trace, facts, "prog", sm_count=132)}
    assert not rules & {"X1", "X2", "X3", "X4", "M1"}


def test_e8_flags_small_serial_kernels_on_one_stream():
    text = "\n".join(["#cudalens-trace\t1\tx"] + [
        f"K\t{i * 1000}\t{i * 1000 + 900}\t0\t7\t{i}\t16\t1\t1\t256\t1\t1\t32\t0\t0\t0\t0\tsmall" for i in range(8)])
    trace = parse(text)
    found = assess.findings(trace, assess.app_facts(trace), "prog", sm_count=132)
    assert any(f.rule == "E8" for f in found)
    assert not any(f.rule == "E8" for f in assess.findings(trace, assess.app_facts(trace), "prog", sm_count=8))


# ---------------------------------------------------------------------------- report and renderers


def test_report_matches_the_schema_and_renders():
    jsonschema = pytest.importorskip("jsonschema")
    from cudalens.report.profile_html import render_html, sarif_log

    schema = json.loads(SCHEMA.read_text())
    for fixture, argv in ((TORCH, [sys.executable, "examples/profile/torch_train.py"]),
                          (CUPY, [sys.executable, str(CUPY_PY)])):
        r = _report(fixture, argv)
        jsonschema.validate(r, schema)
        page = render_html(r)
        assert "<svg class=\"timeline\"" in page and r["kernels"][0]["name"] in page
        log = sarif_log(r)
        assert all(res["locations"][0]["physicalLocation"].get("region") for res in log["runs"][0]["results"])
    bad = dict(r, schema="cudalens/profile-0")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_cli_reports_from_a_saved_trace(capsys):
    rc = main(["profile", "--trace", str(CUPY), "--cc", "9.0", "--format", "json", "--", sys.executable, str(CUPY_PY)])
    assert rc == 0
    r = json.loads(capsys.readouterr().out)
    assert r["schema"] == "cudalens/profile-1" and r["collector"] == "cupti-python"


# ------------------------------------------------------------------------------------ error paths


def _run(trace, status=0, stopped=None):
    return TracedRun(("prog",), "python", trace, status, 1.0, stopped, None)


def test_errors_name_the_programs_exit_status():
    trace = parse_file(str(CUPY))
    with pytest.raises(ProgramFailed, match="exit status 3") as e:
        check_run(_run(trace, 3))
    assert e.value.exit_status == 3
    with pytest.raises(ProgramFailed, match="killed by signal 11"):
        check_run(_run(trace, -11))
    with pytest.raises(ProgramFailed, match="never initialized CUDA.*exit status 0"):
        check_run(_run(None, 0))
    empty = parse("#cudalens-trace\t1\tx\nI\tend\t1\n")
    with pytest.raises(ProgramFailed, match="launched no CUDA kernel"):
        check_run(_run(empty, 0))
    no_driver = parse("#cudalens-trace\t1\tx\nI\terror\tcupti: CUDA driver is not found\n")
    with pytest.raises(NoDeviceError, match="driver is not found"):
        check_run(_run(no_driver, 0))
    assert check_run(_run(trace, 143, stopped=5.0)) is trace  # --duration stopped it: not a failure


def _child_without_gpu(tmp_path, body: str) -> Path:
    script = tmp_path / "prog.py"
    script.write_text(body)
    return script


@pytest.mark.parametrize("body, needle", [
    ("import sys\nsys.exit(4)\n", None),
    ("print('cpu only')\n", None),
])
def test_cli_error_paths_one_line_exit_2(tmp_path, capsys, body, needle):
    """Without a GPU (CI) the child cannot enable CUPTI: one line, exit 2. With a GPU the program runs:
    a failing one reports its own exit status, one that never launches a kernel says so."""
    script = _child_without_gpu(tmp_path, body)
    rc = main(["profile", "--", sys.executable, str(script)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len([ln for ln in err if ln.startswith("cudalens: error")]) == 1
    msg = err[-1]
    assert ("exit status 4" in msg) or ("launched no CUDA kernel" in msg) or ("never initialized CUDA" in msg) \
        or ("could not trace CUDA" in msg)
    if "exit 4" in body or "exit(4)" in body:
        assert "could not trace CUDA" in msg or "exit status 4" in msg


def test_cli_rejects_missing_programs(capsys):
    assert main(["profile", "--", "/nonexistent/prog"]) == 2
    assert "no such program" in capsys.readouterr().err
    assert main(["profile"]) == 2


def test_command_for_python_and_native(tmp_path):
    script = tmp_path / "a.py"
    script.write_text("pass\n")
    assert is_python_program(["python3", str(script)]) and is_python_program([str(script)])
    assert not is_python_program(["/bin/true"])
    mode, cmd, env = command_for(["python3", "-u", str(script), "x"], "/tmp/out", 5)
    assert mode == "python" and cmd[:4] == ["python3", "-u", "-m", "cudalens.trace._pyrun"]
    assert cmd[-3:] == ["--", str(script), "x"][-3:] and "PYTHONPATH" in env
    with pytest.raises(InputError, match="no such Python script"):
        command_for(["python3", str(tmp_path / "missing.py")], "/tmp/out", 0)


def test_pyrun_child_reports_the_programs_status_without_a_driver(tmp_path):
    """The child itself: on a machine without a driver it writes an error record and does not run the program."""
    import subprocess

    script = tmp_path / "p.py"
    marker = tmp_path / "ran"
    script.write_text(f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(5)\n")
    out = tmp_path / "t.tsv"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, "-m", "cudalens.trace._pyrun", str(out), "0", "--", str(script)],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    trace = parse_file(str(out))
    if "error" in trace.info:  # no GPU here: nothing ran
        assert not marker.exists() and proc.returncode == 0
    else:  # a GPU machine: the program ran and its status came through
        assert marker.exists() and proc.returncode == 5 and trace.info["exit_status"] == "5"


def test_native_trace_of_a_cuda_sample_finds_its_transfers_and_ranks_its_kernels():
    """cuda-samples' transpose, traced through the injection library on an H100 (eight kernels, 101 launches
    each; pageable synchronous copies between them)."""
    TRANSPOSE = FIX / "h100_transpose.tsv"
    trace = parse_file(str(TRANSPOSE))
    assert trace.collector == "injection" and trace.complete
    facts = assess.app_facts(trace)
    names = [k.name for k in facts.kernels]
    assert len(names) == 8 and all(k.launches == 101 for k in facts.kernels)
    assert names[0] == "transposeNaive"  # its uncoalesced stores make it the slowest
    by_name = {k.name: k for k in facts.kernels}
    assert by_name["transposeNaive"].mean_s > 3 * by_name["copy"].mean_s
    rules = {f.rule for f in assess.findings(trace, facts, "/tmp/transpose", sm_count=132)}
    assert {"X1", "X3", "X4"} <= rules
    pageable = [c for c in trace.copies if c.host_side == "pageable"]
    assert pageable and all(not c.is_async for c in pageable)


def _metrics(**values):
    from cudalens.profile.ncu import LaunchCounters, legacy_metrics

    return legacy_metrics([LaunchCounters(1, "column_sum", "128", "64", metrics=values)])


def test_counter_findings_and_their_placement_on_the_source():
    from cudalens.trace.kernels import (
        counter_findings,
        place_counter_findings,
        place_on_measured_lines,
        sources_in_python,
    )

    trace = parse_file(str(CUPY))
    k = assess.app_facts(trace).kernels[0]
    m = _metrics(**{"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct": 12.5,
                    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": 100.0,
                    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 32.0,
                    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1.0})
    found = counter_findings(k, m, "prog")
    assert [f.rule for f in found] == ["G1"] and "12%" in found[0].message and found[0].line is None
    # 0 % means ncu counted no instruction of that kind: not a finding
    assert counter_findings(k, _metrics(**{"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct": 0.0}),
                            "prog") == []
    src = next(s for s in sources_in_python(str(CUPY_PY)) if s.kernel == "column_sum")
    entry = {"line": 17, "accesses": [{"space": "global", "pattern": "coalesced", "line": 24},
                                      {"space": "global", "pattern": "parameter-dependent", "line": 22}]}
    placed = place_counter_findings(found, [], entry, src)
    assert (placed[0].file, placed[0].line) == (str(CUPY_PY), 22)
    # a static finding of the same problem speaks for it: the counter finding is not repeated
    static = [dataclasses.replace(found[0], rule="G3", line=22)]
    assert place_counter_findings(found, static, entry, src) == []
    rows = [{"file": str(CUPY_PY), "line": 22, "space": "global", "sectors_per_request": 32.0,
             "ideal_sectors_per_request": 4.0}]
    assert place_on_measured_lines(found, rows)[0].line == 22


def test_timeline_bins_cover_the_trace():
    from cudalens.trace.app import timeline

    tl = timeline(parse_file(str(TORCH)), bins=50)
    assert tl["bins"] == 50 and len(tl["kernel"]) == 50 and len(tl["copy"]) == 50
    assert all(0 <= v <= 1 for v in tl["kernel"] + tl["copy"]) and max(tl["kernel"]) > 0


def test_refused_counters_fall_back_to_the_trace_with_the_hint(monkeypatch):
    from cudalens.profile.ncu import PERMISSION_HINT, CountersUnavailable
    from cudalens.trace import app, counters

    calls = []

    def refused(*args, **kwargs):
        calls.append(args)
        raise CountersUnavailable(PERMISSION_HINT)

    monkeypatch.setattr(counters, "profile_kernel", refused)
    trace = parse_file(str(CUPY))
    run = TracedRun(("prog",), "python", trace, 0, 1.0, None, None)
    r = app.build_report([sys.executable, str(CUPY_PY)], run, trace, Options(cc="9.0", counters=True), dict(DEVICE))
    assert r["mode"] == "trace" and len(calls) == 1  # asked once, not once per kernel
    assert any("ERR_NVGPUCTRPERM" in n and n.startswith("counters not read, trace only") for n in r["notes"])
    assert {"X1", "X2", "X3"} <= {f["rule"] for f in r["findings"]}


def test_launch_limit_is_reported():
    text = "\n".join(["#cudalens-trace\t1\tx"] + [
        f"K\t{i * 1000}\t{i * 1000 + 900}\t0\t7\t{i}\t1024\t1\t1\t256\t1\t1\t32\t0\t0\t0\t0\tk" for i in range(3)]
        + ["I\tlaunch_limit_dropped\t97", "I\tend\t1"])
    r = report_from_trace(parse(text), ["prog"], Options(cc="9.0", launch_limit=3), device=dict(DEVICE))
    assert any("--launch-limit 3: 97 later kernel launches" in n for n in r["notes"])
