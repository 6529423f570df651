"""pipeline.isolated.run_limited: with several jobs, a finished worker's slot is filled again before the
parent reads its result and hands it on (the parent's part overlaps the running workers'); with one job
the parent's part comes first, so ``-j 1`` stays serial."""

from __future__ import annotations

import os
import time

import pytest

from cudalens.pipeline.isolated import FileLimits, run_limited

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked processes")


def _work(folder: str):
    def fn(item: str) -> str:
        open(os.path.join(folder, item), "w").close()  # started
        if item == "slow":
            time.sleep(3.0)
        return item
    return fn


def _seen(path: str, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.02)
    return os.path.exists(path)


def test_with_two_jobs_the_next_worker_starts_before_the_result_is_handed_on(tmp_path) -> None:
    seen: dict[str, bool] = {}

    def done(item: str, result: object) -> None:
        if item == "quick":  # "last" can only have started if its slot was filled before this call
            seen["last started"] = _seen(str(tmp_path / "last"), 2.0)

    got = run_limited(["quick", "slow", "last"], _work(str(tmp_path)), FileLimits(seconds=30), jobs=2, done=done)
    assert got == {"quick": "quick", "slow": "slow", "last": "last"}
    assert seen == {"last started": True}


def test_with_one_job_the_result_is_handed_on_before_the_next_worker_starts(tmp_path) -> None:
    seen: dict[str, bool] = {}

    def done(item: str, result: object) -> None:
        if item == "quick":
            seen["slow started"] = _seen(str(tmp_path / "slow"), 0.5)

    got = run_limited(["quick", "slow"], _work(str(tmp_path)), FileLimits(seconds=30), jobs=1, done=done)
    assert got == {"quick": "quick", "slow": "slow"}
    assert seen == {"slow started": False}
