"""check's units compiled ahead (issue #29): each unit gets what its own compile gives, and a group of
units shares one disassembler start."""

from __future__ import annotations

import os
import pickle
import signal
import time
from pathlib import Path
from types import SimpleNamespace

from cudalens.compiled import sass_elf
from cudalens.pipeline import compile_ahead
from cudalens.pipeline.compile_step import compile_one

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "compiled"
UNITS = [str(EXAMPLES / n) for n in ("mixed.cu", "local_array.cu", "double_literal.cu")]


def test_each_unit_gets_what_its_own_compile_gives(wheel_toolchain, tmp_path, monkeypatch):
    calls: list[int] = []
    real = sass_elf.disassemble_many

    def counted(nvdisasm, cc, items, env=None):
        calls.append(len(items))
        return real(nvdisasm, cc, items, env)

    monkeypatch.setattr(sass_elf, "disassemble_many", counted)
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "ahead-cache"))
    folder = tmp_path / "out"
    folder.mkdir()
    compile_ahead._serve(UNITS, "9.0", {}, None, {}, jobs=1, group=2, folder=str(folder))
    assert calls == [2, 1]  # groups of two units: one disassembler start each

    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "own-cache"))  # not the entries just stored
    for i, unit in enumerate(UNITS):
        kind, (ahead, _notes) = pickle.loads((folder / f"{i}.pkl").read_bytes())
        own, _own_notes = compile_one(unit, "9.0", {}, None)
        assert kind == "value" and not own.cache_hit and not ahead.cache_hit
        assert ahead.kernels == own.kernels and ahead.errors == own.errors and ahead.ptx == own.ptx
        assert any(k.sass_counts for k in ahead.kernels.values())  # the batch's SASS, classified


def test_a_unit_the_process_did_not_reach_is_left_to_its_worker(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_ahead, "_serve", lambda *a, **k: time.sleep(60))  # the fork runs this one
    ahead = compile_ahead.CompileAhead(["a.cu", "b.cu"], "9.0", {}, None, {}, jobs=1)
    try:
        os.killpg(ahead._pid, signal.SIGKILL)  # type: ignore[arg-type]
        t0 = time.monotonic()
        ahead.wait()  # returns once the process has ended (no deadline was given)
        assert time.monotonic() - t0 < 20 and ahead._pid is None
        assert ahead.outcome("a.cu") is None and ahead.outcome("b.cu") is None and ahead.size("a.cu") == 0
    finally:
        ahead.close()


def test_a_process_past_the_units_own_deadlines_is_stopped(monkeypatch):
    monkeypatch.setattr(compile_ahead, "_serve", lambda *a, **k: time.sleep(60))
    t0 = time.monotonic()
    ahead = compile_ahead.CompileAhead(["a.cu", "b.cu", "c.cu"], "9.0", {}, None, {}, jobs=2, seconds_each=0.5)
    try:
        ahead.wait()  # 3 units, 2 at a time: two rounds of 0.5 s, then stopped
        assert 1.0 <= time.monotonic() - t0 < 20 and ahead.outcome("a.cu") is None
        assert ahead._pid is None  # stopped and reaped
    finally:
        ahead.close()


def test_the_outcomes_are_read_once_the_process_ends_and_sized_by_their_ptx(tmp_path, monkeypatch):
    def serve(units, cc, defines, build, instantiate, jobs, group, folder):
        time.sleep(0.5)  # the parent waits: nothing is read before the process ends
        compile_ahead._store(os.path.join(folder, "0.pkl"), ("value", (SimpleNamespace(ptx="x" * 7), [])))
        compile_ahead._store(os.path.join(folder, "1.pkl"), ("error", ValueError("no")))

    monkeypatch.setattr(compile_ahead, "_serve", serve)
    t0 = time.monotonic()
    ahead = compile_ahead.CompileAhead(["a.cu", "b.cu", "c.cu"], "9.0", {}, None, {}, jobs=1)
    try:
        ahead.wait()
        assert time.monotonic() - t0 >= 0.5
        assert ahead.size("a.cu") == 7 and ahead.outcome("b.cu")[0] == "error" and ahead.size("b.cu") == 0
        assert ahead.outcome("c.cu") is None  # not written: its worker compiles it
    finally:
        ahead.close()


def test_check_compiles_the_units_ahead_and_says_so(wheel_toolchain, tmp_path, monkeypatch):
    """The whole path: the progress callback names the compile phase, then counts the analyses; each file's
    compiled facts come from the process that compiled ahead (its kernels carry SASS)."""
    from cudalens.pipeline.batch import analyze_files
    from cudalens.pipeline.isolated import FileLimits

    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[tuple[int, int, str]] = []
    done, failed, _limits = analyze_files(UNITS[:2], block=None, defines={}, cc="9.0", compile=True, build=None,
                                          jobs=1, progress=lambda d, t, p: calls.append((d, t, p)),
                                          file_limits=FileLimits(seconds=120))
    assert not failed and len(done) == 2
    assert calls[0] == (0, 2, "compiling 2 units") and [c[0] for c in calls[1:]] == [1, 2]
    for fa in done:
        assert fa.compiled is not None and any(k.sass_counts for k in fa.compiled.kernels.values())
