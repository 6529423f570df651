"""benchmarks/model/ptx_model_speed_pool.py: several side-by-side runs read as one (issue #27's speed point): each
unit's least over every round of every run, per label and per family of labels naming one checkout."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "model" / "ptx_model_speed_pool.py"


def _pool():
    spec = importlib.util.spec_from_file_location("model_speed_pool_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod.pool


def _run(rows: list[tuple[str, dict[str, float]]]) -> dict:
    return {"runs": [{"code": f"{label} abc1234", "per_unit": per} for label, per in rows]}


def test_each_unit_takes_its_least_over_runs_and_labels() -> None:
    one = _run([("old", {"u": 1.0, "v": 2.0}), ("new", {"u": 0.9, "v": 2.5}), ("new2", {"u": 1.1, "v": 1.9})])
    two = _run([("old", {"u": 0.8, "v": 2.2}), ("old2", {"u": 0.9, "v": 1.8}), ("new", {"u": 1.0, "v": 2.4})])
    got = _pool()([one, two], {"old": ["old", "old2"], "new": ["new", "new2"]})
    assert got["labels"] == {"old": 2.8, "new": 3.3, "new2": 3.0, "old2": 2.7}
    assert got["units"] == {"u": {"old": 0.8, "new": 0.9}, "v": {"old": 1.8, "new": 1.9}}
    assert got["families"] == {"old": {"least_cpu_sum": 2.6, "ratio": 1.0}, "new": {"least_cpu_sum": 2.8, "ratio": 1.077}}
    assert got["a_a"] == {"old": round(2.7 / 2.8, 3), "new": round(3.0 / 3.3, 3)}
