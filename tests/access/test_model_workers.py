"""The compiled model on two processes (cudalens.pipeline.model_workers): the same evaluations as
one process, and a worker that breaks leaves its kernels to this process."""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future
from pathlib import Path

import pytest

from cudalens.pipeline import model_workers as W

PATTERNS = Path(__file__).parent / "ptx" / "realworld_patterns.cu"


def _jobs(module):
    return [(fn.name, (128, 1, 1), (2, 1, 1), {}, None) for fn in module.entries]


@pytest.mark.skipif(threading.active_count() > 1, reason="a fork is only safe in a process with one thread")
def test_two_processes_give_what_one_gives(ptx_of, monkeypatch):
    module = ptx_of(PATTERNS)
    jobs = _jobs(module)
    monkeypatch.setattr(W, "CHUNK_INSTRUCTIONS", 1)  # one kernel per chunk: the worker gets several
    worker = W.model_worker()
    if worker is None:
        pytest.skip("no fork or one core on this machine")
    with worker:
        both = W.evaluate_jobs(module, jobs, worker)
    one = W.evaluate_jobs(module, jobs, None)
    assert list(both) and set(both) == set(one) == {j[0] for j in jobs}
    assert all(both[k] == one[k] for k in one)


class _Broken(Executor):
    def __init__(self) -> None:
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        self.submitted += 1
        fut: Future = Future()
        fut.set_exception(RuntimeError("worker died"))
        return fut


def test_a_broken_worker_leaves_its_kernels_here(ptx_of, monkeypatch):
    module = ptx_of(PATTERNS)
    jobs = _jobs(module)
    monkeypatch.setattr(W, "CHUNK_INSTRUCTIONS", 1)
    broken = _Broken()
    out = W.evaluate_jobs(module, jobs, broken)
    assert broken.submitted >= 1 and out == W.evaluate_jobs(module, jobs, None)
