"""A tuning run killed with SIGKILL mid-sweep resumes: nothing measured is lost, nothing stored twice."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

SPACE = ["BM=32,64,128", "BN=64,128", "BK=8,16", "TM=4,8", "TN=4,8"]


def _cmd(src, db, log, strategy):
    cmd = [sys.executable, "-m", "cudalens", "tune", src, "--kernel", "gemm<BM,BN,BK,TM,TN>"]
    for s in SPACE:
        cmd += ["--space", s]
    cmd += ["--restrict", "(BM*BK) % ((BM/TM)*(BN/TN)) == 0", "--restrict", "(BM/TM)*(BN/TN) >= 32",
            "--const", "M=1024", "--const", "N=1024", "--grid", "N/BN, M/BM", "--block", "(BM/TM)*(BN/TN)",
            "--strategy", strategy, "--db", db, "--format", "json",
            "--fake", json.dumps({"delay_s": 0.15, "log": log})]
    return cmd


def _stored(db):
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT config_key, status, run_id FROM tune_results").fetchall()
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        conn.close()
    return rows, runs


def test_sigkill_then_resume(gemm_source, tmp_path):
    db, log = str(tmp_path / "h.db"), str(tmp_path / "measured.log")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(_cmd(gemm_source, db, log, "exhaustive"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    deadline = time.time() + 60
    while time.time() < deadline:  # kill it once a few results are stored
        if os.path.exists(db):
            try:
                measured = [r for r in _stored(db)[0] if r[1] == "measured"]
            except sqlite3.Error:
                measured = []
            if len(measured) >= 5:
                break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before, _ = _stored(db)
    measured_before = {k for k, s, _ in before if s == "measured"}
    assert 5 <= len(measured_before)

    out = subprocess.run(_cmd(gemm_source, db, log, "exhaustive"), capture_output=True, text=True, env=env, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["resumed"] is True
    rows, runs = _stored(db)
    keys = [k for k, _, _ in rows]
    assert len(keys) == len(set(keys)) == report["configurations"]  # every configuration decided once
    measured = [k for k, s, _ in rows if s == "measured"]
    assert measured_before <= set(measured)  # nothing stored before the kill was lost
    assert runs == len(measured)  # one history run per measurement: none stored twice
    with open(log) as fh:
        started = [line.split()[1] for line in fh]
    # every measurement started after the kill is of a configuration that had no stored result;
    # only the one in flight at the kill may have started twice
    assert not (set(started[len(started) - (len(measured) - len(measured_before)):]) & measured_before)
    twice = {k for k in started if started.count(k) > 1}
    assert len(twice) <= 1
    assert report["measured"] == len(measured) and report["stop_reason"] == "every survivor measured"


class _Interrupting:
    """A fake runner that stops the process (KeyboardInterrupt) before its ``stop_after + 1``-th measurement."""

    def __init__(self, stop_after):
        from cudalens.tune.runners import FakeRunner

        self.inner, self.left = FakeRunner(noise=0.002), stop_after

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def measure(self, item):
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return self.inner.measure(item)


def test_interrupted_guided_search_continues_as_if_uninterrupted(gemm_source, gemm_space, tmp_path):
    """The strategies replay the stored measurements: an interrupted and resumed guided search
    measures exactly the configurations an uninterrupted one does, in the same order."""
    import pytest

    from cudalens.tune.engine import TuneSpec, prepare, run_local
    from cudalens.tune.runners import FakeRunner, RunnerSpec, fake_builder

    spec = TuneSpec(gemm_source, "gemm<BM,BN,BK,TM,TN>", gemm_space, ("N/BN", "M/BM"), ("(BM/TM)*(BN/TN)",),
                    strategy="guided")
    rs = RunnerSpec("fake")
    whole = prepare(spec, rs, "fake GPU", str(tmp_path / "a.db"), builder=fake_builder)
    run_local(whole, rs, str(tmp_path / "a.db"), runner=FakeRunner(noise=0.002))
    db = str(tmp_path / "b.db")
    first = prepare(spec, rs, "fake GPU", db, builder=fake_builder)
    with pytest.raises(KeyboardInterrupt):
        run_local(first, rs, db, runner=_Interrupting(20))
    second = prepare(spec, rs, "fake GPU", db, builder=fake_builder)
    assert second.resumed and len(second.strategy.history) == 20
    run_local(second, rs, db, runner=FakeRunner(noise=0.002))
    assert second.strategy.history == whole.strategy.history
    assert second.strategy.stop_reason == whole.strategy.stop_reason
