"""The compiled access model on both cores: the kernels of a unit shared between this process and
one forked worker.

The lane machine is Python over numpy, one kernel at a time, so a unit with many instantiations
(cuda-samples' reduction: 213 kernels) keeps one core busy for seconds while the other idles.
:func:`model_worker` forks one worker process, before the compile threads start (a fork is safe
only while a process has one thread). :func:`evaluate_jobs` then hands the worker small chunks of
kernels from the end of the list, by name, while this process takes them from the front: the two
meet wherever the work splits evenly, whatever each kernel costs. The worker gets the unit's PTX
text once and, like this process, parses only the kernels it evaluates (cudalens.compiled.ptx.
PtxSource). A worker that fails leaves its kernels to this process; results are the same as
evaluating all of them here (each evaluation is a pure function of the module and its launch).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import threading
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any, Mapping

from cudalens.access.ptx_eval import KernelEvaluation, evaluate
from cudalens.compiled.ptx import PtxSource
from cudalens.errors import what_failed
from cudalens.gc_pause import collector_paused

#: (mangled kernel, block, grid, known parameters, SASS shared widths per line)
Job = tuple[str, tuple[int, int, int], tuple[int, int, int], Mapping[int, Any], Any]
#: PTX lines per chunk handed to the worker (a few small kernels, or one large one)
CHUNK_LINES = 300
#: below this many PTX lines of kernels in all (a few small kernels), one process is as quick as two
MIN_PARALLEL_LINES = 600


def model_worker() -> Executor | None:
    """One forked worker process, or None where that is not safe or not useful (one core, no fork,
    or threads already running)."""
    if (os.cpu_count() or 1) < 2 or threading.active_count() > 1:
        return None
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        return None
    pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx)
    pool.submit(int)  # forks the worker now, while this process has one thread
    return pool


def _evaluate(source: PtxSource, job: Job) -> KernelEvaluation | str:
    name, blk, grid, params, sass = job
    module = source.module([name])
    fn = module.function(name)
    if fn is None:
        return "not in the PTX"
    try:
        return evaluate(module, fn, blk, grid, params, sass_lds=sass)
    except Exception as exc:  # noqa: BLE001 - a model failure is reported per kernel
        return what_failed(exc)


#: in the worker: the unit whose chunks it is evaluating (its PTX key and source)
_UNIT: dict[str, PtxSource] = {}


def _evaluate_chunk(key: str, text: str | None, jobs: list[Job]) -> list[KernelEvaluation | str] | None:
    """In the worker: a chunk of the unit ``key`` (its text comes with the unit's first chunk);
    None when the worker does not hold that unit (this process then evaluates the chunk)."""
    if text is not None:
        _UNIT.clear()
        _UNIT[key] = PtxSource(text)
    source = _UNIT.get(key)
    if source is None:
        return None
    with collector_paused():
        return [_evaluate(source, j) for j in jobs]


def evaluate_jobs(source: PtxSource, jobs: list[Job], worker: Executor | None = None) -> dict[str, KernelEvaluation | str]:
    """Every job's evaluation (or the name of the exception it raised), by kernel name."""
    with collector_paused():
        return _evaluate_jobs(source, jobs, worker)


def _evaluate_jobs(source: PtxSource, jobs: list[Job], worker: Executor | None) -> dict[str, KernelEvaluation | str]:
    size = {j[0]: source.size.get(j[0], 0) for j in jobs}
    out: dict[str, KernelEvaluation | str] = {}
    if worker is None or len(jobs) < 2 or sum(size.values()) < MIN_PARALLEL_LINES:
        return {j[0]: _evaluate(source, j) for j in jobs}
    head, tail = 0, len(jobs)
    pending: list[tuple[Future, list[Job]]] = []
    key = hashlib.sha1(source.text.encode(errors="replace")).hexdigest()
    text: str | None = source.text  # sent with the first chunk only

    def send() -> None:  # keep two chunks queued at the worker, taken from the end of the list
        nonlocal tail, text
        while len(pending) < 2 and tail > head + 1:
            chunk: list[Job] = []
            while tail > head + 1 and (not chunk or sum(size.get(j[0], 0) for j in chunk) < CHUNK_LINES):
                tail -= 1
                chunk.append(jobs[tail])
            try:
                pending.append((worker.submit(_evaluate_chunk, key, text, chunk), chunk))
                text = None
            except Exception:  # noqa: BLE001 - a broken worker: this process does the rest
                tail += len(chunk)
                return

    def collect(wait: bool) -> None:
        while pending and (wait or pending[0][0].done()):
            fut, chunk = pending.pop(0)
            try:
                results = fut.result()
            except Exception:  # noqa: BLE001 - the worker died: evaluate its chunk here
                results = None
            if results is None:
                results = [_evaluate(source, j) for j in chunk]
            out.update(zip((j[0] for j in chunk), results))

    send()
    while head < tail:
        collect(wait=False)
        send()
        out[jobs[head][0]] = _evaluate(source, jobs[head])
        head += 1
    collect(wait=True)
    return out
