"""Every lab runs end to end on the fake runner: table, verdict, JSON and PNG. A fake GPU that
behaves as the guide describes makes the verdict say "holds"; one that does not, "does not hold"."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from cudalens.labs import all_labs, get_lab, run_lab, write_result
from cudalens.labs.fake import H100_LIKE, FakeRunner
from cudalens.labs.predict import offset_sectors, stride_sectors


@pytest.mark.parametrize("lab", all_labs(), ids=lambda lab: lab.name)
def test_lab_runs_on_fake_runner(lab, tmp_path):
    runner = FakeRunner()
    res = run_lab(lab, runner, quick=True)
    assert res.status == "ok", res.message
    assert res.rows, "no table"
    assert res.verdict is not None and res.verdict.summary
    paths = write_result(lab, res, tmp_path)
    doc = json.loads(paths[0].read_text())
    assert doc["lab"] == lab.name and doc["rules"] == list(lab.rules)
    assert len(doc["table"]) == len(res.rows)
    assert ("release", {}) in runner.calls
    assert res.predictions, "no predicted-vs-measured rows"
    assert doc["predicted_vs_measured"] and len(doc["predicted_vs_measured"]) == len(res.predictions)
    if lab.plot is not None:
        assert paths[1].stat().st_size > 1000


def _sector_gpu(op, name=None, args=(), **_):
    """A GPU whose copy time is proportional to the sectors each warp touches."""
    if op == "kernel" and name == "offset_copy":
        return offset_sectors(int(args[2])) / 4
    if op == "kernel" and name == "stride_copy":
        return stride_sectors(int(args[2])) / 4
    return 1.0


def _cached_gpu(op, **_):
    return 1.0


@pytest.mark.parametrize("name", ["coalescing-offset", "coalescing-stride"])
def test_sector_model_gpu_holds_flat_gpu_does_not(name):
    lab = get_lab(name)
    holds = run_lab(lab, FakeRunner(cost=_sector_gpu), quick=True)
    flat = run_lab(lab, FakeRunner(cost=_cached_gpu), quick=True)
    assert holds.verdict.holds is True
    assert flat.verdict.holds is False
    # predicted vs measured: on the sector-model GPU they coincide
    sector_rows = [p for p in holds.predictions if "model_relative_bandwidth" in p]
    assert sector_rows
    for p in sector_rows:
        assert p["measured_relative_bandwidth"] == pytest.approx(p["model_relative_bandwidth"])


def test_cc_below_lab_minimum_is_skipped():
    old = replace(H100_LIKE, cc="7.0")
    res = run_lab(get_lab("async-copy"), FakeRunner(info=old), quick=True)
    assert res.status == "skipped" and "8.0" in res.message


def test_failing_lab_becomes_error_result():
    def boom(op, **_):
        raise RuntimeError("device fell off the bus")
    res = run_lab(get_lab("divergence"), FakeRunner(cost=boom), quick=True)
    assert res.status == "error" and "fell off" in res.message
