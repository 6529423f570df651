"""pipeline.isolated.run_limited: with several jobs, a finished worker's slot is filled again before the
parent reads its result and hands it on (the parent's part overlaps the running workers'); with one job
the parent's part comes first, so ``-j 1`` stays serial."""

from __future__ import annotations

import os
import time

import pytest

from cudalens.pipeline.isolated import FileLimits, Stopped, run_limited
from cudalens.pipeline.worker_pool import run_reused

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


@pytest.mark.parametrize("reuse", [False, True])
def test_with_two_jobs_the_next_worker_starts_before_the_result_is_handed_on(tmp_path, reuse) -> None:
    seen: dict[str, bool] = {}

    def done(item: str, result: object) -> None:
        if item == "quick":  # "last" can only have started if its slot was filled before this call
            seen["last started"] = _seen(str(tmp_path / "last"), 2.0)

    got = (run_reused if reuse else run_limited)(["quick", "slow", "last"], _work(str(tmp_path)), FileLimits(seconds=30),
                                                 jobs=2, done=done)
    assert got == {"quick": "quick", "slow": "slow", "last": "last"}
    assert seen == {"last started": True}


@pytest.mark.parametrize("reuse", [False, True])
def test_with_one_job_the_result_is_handed_on_before_the_next_worker_starts(tmp_path, reuse) -> None:
    seen: dict[str, bool] = {}

    def done(item: str, result: object) -> None:
        if item == "quick":
            seen["slow started"] = _seen(str(tmp_path / "slow"), 0.5)

    got = (run_reused if reuse else run_limited)(["quick", "slow"], _work(str(tmp_path)), FileLimits(seconds=30), jobs=1,
                                                 done=done)
    assert got == {"quick": "quick", "slow": "slow"}
    assert seen == {"slow started": False}


def _hostile(item: str) -> object:
    if item == "hang":
        time.sleep(60)
    if item == "raise":
        raise ValueError("bad input")
    if item == "die":
        os._exit(3)
    if item == "memory":
        return bytearray(400 * 2**20)  # past the 64 MB cap
    return (item, os.getpid())


@pytest.mark.parametrize("jobs", [1, 2])
def test_reused_workers_keep_each_items_limits_and_go_on(jobs) -> None:
    """With reuse, a worker takes one item after another; an item past its deadline, out of memory or whose
    worker dies is reported as alone, the others after it are still run (by a fresh worker), and a raised
    error is the item's result."""
    items = ["a", "b", "hang", "c", "raise", "d", "die", "e", "memory", "f", "g"]
    got = run_reused(items, _hostile, FileLimits(seconds=2, memory_mb=64), jobs=jobs)
    assert isinstance(got["hang"], Stopped) and "deadline of 2 s" in str(got["hang"])
    assert isinstance(got["die"], Stopped) and "died" in str(got["die"])
    assert isinstance(got["memory"], Stopped) and "memory cap of 64 MB" in str(got["memory"])
    assert isinstance(got["raise"], ValueError)
    fine = [got[i] for i in "abcdefg"]
    assert [f[0] for f in fine] == list("abcdefg")  # type: ignore[index]
    workers = {f[1] for f in fine}  # type: ignore[index]
    assert len(workers) < len(fine)  # workers were reused
