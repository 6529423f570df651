"""The compiled model on two processes (cudalens.evidence.model_workers): the same evaluations as
one process, and a worker that breaks leaves its kernels to this process."""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future
from pathlib import Path

import pytest

from cudalens.compiled.ptx import PtxSource
from cudalens.evidence import model_workers as W

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


class _FakeWorker(Executor):
    """A worker run in this process: ``answer`` says what each submitted chunk gets."""

    def __init__(self) -> None:
        self.answered: list = []

    def answer(self, fn, args) -> Future:
        raise NotImplementedError

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        fut = self.answer(fn, args)
        self.answered.append(fut.exception() or fut.result())
        return fut


class _Broken(_FakeWorker):
    """A worker that died: every chunk raises."""

    @staticmethod
    def gave_nothing(answer) -> bool:
        return isinstance(answer, RuntimeError)

    def answer(self, fn, args) -> Future:
        fut: Future = Future()
        fut.set_exception(RuntimeError("worker died"))
        return fut


class _Forgetful(_FakeWorker):
    """A worker that lost the unit's text (a restarted process): it answers None for every chunk."""

    @staticmethod
    def gave_nothing(answer) -> bool:
        return answer is None

    def answer(self, fn, args) -> Future:
        W._UNIT.clear()
        key, _text, jobs = args
        fut: Future = Future()
        fut.set_result(fn(key, None, jobs))
        return fut


@pytest.mark.parametrize("worker", [_Broken, _Forgetful], ids=["broken", "without-the-unit"])
def test_a_worker_that_gives_nothing_leaves_its_kernels_here(worker, ptx_text_of, monkeypatch):
    source = PtxSource(ptx_text_of(PATTERNS))
    jobs = _jobs(source)
    monkeypatch.setattr(W, "CHUNK_LINES", 1)
    fake = worker()
    out = W.evaluate_jobs(source, jobs, fake)
    assert fake.answered and all(fake.gave_nothing(a) for a in fake.answered)
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


def test_what_the_paused_evaluation_leaves_alive_is_not_left_young(ptx_text_of):
    # re-enabled, the collector would walk every object still in the youngest generation at its next
    # allocation: those the evaluation made (its results) join the oldest one instead
    import gc

    source = PtxSource(ptx_text_of(PATTERNS))
    assert gc.isenabled()
    out = W.evaluate_jobs(source, _jobs(source)[:1], None)
    (evaluation,) = out.values()
    young = {id(o) for o in gc.get_objects(generation=0)}
    assert id(evaluation) not in young and not any(id(p) in young for p in evaluation.predictions)
    assert any(id(o) == id(evaluation) for o in gc.get_objects(generation=2))
