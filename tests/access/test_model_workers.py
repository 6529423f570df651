"""The compiled model on two processes (cudalens.pipeline.model_workers): the same evaluations as
one process, and a worker that breaks leaves its kernels to this process."""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future
from pathlib import Path

import pytest

from cudalens.compiled.ptx import PtxSource
from cudalens.pipeline import model_workers as W

PATTERNS = Path(__file__).parent / "ptx" / "realworld_patterns.cu"


def _jobs(source):
    return [(name, (128, 1, 1), (2, 1, 1), {}, None) for name in source.entry_names]


@pytest.mark.skipif(threading.active_count() > 1, reason="a fork is only safe in a process with one thread")
def test_two_processes_give_what_one_gives(ptx_text_of, monkeypatch):
    source = PtxSource(ptx_text_of(PATTERNS))
    jobs = _jobs(source)
    monkeypatch.setattr(W, "CHUNK_LINES", 1)  # one kernel per chunk: the worker gets several
    worker = W.model_worker()
    if worker is None:
        pytest.skip("no fork or one core on this machine")
    with worker:
        both = W.evaluate_jobs(source, jobs, worker)
    one = W.evaluate_jobs(source, jobs, None)
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


def test_a_broken_worker_leaves_its_kernels_here(ptx_text_of, monkeypatch):
    source = PtxSource(ptx_text_of(PATTERNS))
    jobs = _jobs(source)
    monkeypatch.setattr(W, "CHUNK_LINES", 1)
    broken = _Broken()
    out = W.evaluate_jobs(source, jobs, broken)
    assert broken.submitted >= 1 and out == W.evaluate_jobs(source, jobs, None)


class _Forgetful(Executor):
    """A worker that lost the unit's text (a restarted process): it answers None for every chunk."""

    def __init__(self) -> None:
        self.answered: list = []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        W._UNIT.clear()
        key, _text, jobs = args
        fut: Future = Future()
        fut.set_result(fn(key, None, jobs))
        self.answered.append(fut.result())
        return fut


def test_a_worker_without_the_unit_leaves_its_kernels_here(ptx_text_of, monkeypatch):
    source = PtxSource(ptx_text_of(PATTERNS))
    jobs = _jobs(source)
    monkeypatch.setattr(W, "CHUNK_LINES", 1)
    forgetful = _Forgetful()
    out = W.evaluate_jobs(source, jobs, forgetful)
    assert forgetful.answered and all(a is None for a in forgetful.answered)
    assert out == W.evaluate_jobs(source, jobs, None) and set(out) == {j[0] for j in jobs}


def test_the_cycle_collector_is_paused_only_while_kernels_are_evaluated(ptx_text_of):
    import gc

    source = PtxSource(ptx_text_of(PATTERNS))
    seen: list[bool] = []
    real = W.evaluate

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    W.evaluate = spy
    try:
        assert gc.isenabled()
        W.evaluate_jobs(source, _jobs(source)[:2], None)
        assert gc.isenabled() and seen == [False, False]
        gc.disable()
        W.evaluate_jobs(source, _jobs(source)[:1], None)
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()
        W.evaluate = real
