"""The compiled access model on both cores: the kernels of a unit shared between this process and
one forked worker.

The lane machine is Python over numpy, one kernel at a time, so a unit with many instantiations
(cuda-samples' reduction: 213 kernels) keeps one core busy for seconds while the other idles.
:func:`model_worker` forks one worker process, before the compile threads start (a fork is safe
only while a process has one thread). :func:`evaluate_jobs` then hands the worker small chunks of
kernels from the end of the list, each with just the functions it needs, while this process takes
them from the front: the two meet wherever the work splits evenly, whatever each kernel costs.
A worker that fails leaves its kernels to this process; results are the same as evaluating all of
them here (each evaluation is a pure function of the module and its launch).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import threading
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any, Mapping

from cudalens.access.ptx_eval import KernelEvaluation, evaluate
from cudalens.compiled.ptx import PtxModule

#: (mangled kernel, block, grid, known parameters, SASS shared widths per line)
Job = tuple[str, tuple[int, int, int], tuple[int, int, int], Mapping[int, Any], Any]
#: instructions per chunk handed to the worker (a few small kernels, or one large one)
CHUNK_INSTRUCTIONS = 400
#: below this many instructions in all (a few small kernels), one process is as quick as two
MIN_PARALLEL_INSTRUCTIONS = 300


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


def _evaluate(module: PtxModule, job: Job) -> KernelEvaluation | str:
    name, blk, grid, params, sass = job
    fn = module.function(name)
    if fn is None:
        return "not in the PTX"
    try:
        return evaluate(module, fn, blk, grid, params, sass_lds=sass)
    except Exception as exc:  # noqa: BLE001 - a model failure is reported per kernel
        return type(exc).__name__


def _evaluate_chunk(module: PtxModule, jobs: list[Job]) -> list[KernelEvaluation | str]:
    return [_evaluate(module, j) for j in jobs]


def _subset(module: PtxModule, names: set[str]) -> PtxModule:
    """The module with only the kernels ``names`` (device functions kept): what a chunk needs."""
    return dataclasses.replace(module, functions=tuple(f for f in module.functions
                                                       if not f.is_entry or f.name in names))


def evaluate_jobs(module: PtxModule, jobs: list[Job], worker: Executor | None = None) -> dict[str, KernelEvaluation | str]:
    """Every job's evaluation (or the name of the exception it raised), by kernel name."""
    size = {j[0]: len(f.instructions) for j in jobs if (f := module.function(j[0])) is not None}
    out: dict[str, KernelEvaluation | str] = {}
    if worker is None or len(jobs) < 2 or sum(size.values()) < MIN_PARALLEL_INSTRUCTIONS:
        return {j[0]: _evaluate(module, j) for j in jobs}
    head, tail = 0, len(jobs)
    pending: list[tuple[Future, list[Job]]] = []

    def send() -> None:  # keep two chunks queued at the worker, taken from the end of the list
        nonlocal tail
        while len(pending) < 2 and tail > head + 1:
            chunk: list[Job] = []
            while tail > head + 1 and (not chunk or sum(size.get(j[0], 0) for j in chunk) < CHUNK_INSTRUCTIONS):
                tail -= 1
                chunk.append(jobs[tail])
            try:
                pending.append((worker.submit(_evaluate_chunk, _subset(module, {j[0] for j in chunk}), chunk), chunk))
            except Exception:  # noqa: BLE001 - a broken worker: this process does the rest
                tail += len(chunk)
                return

    def collect(wait: bool) -> None:
        while pending and (wait or pending[0][0].done()):
            fut, chunk = pending.pop(0)
            try:
                out.update(zip((j[0] for j in chunk), fut.result()))
            except Exception:  # noqa: BLE001 - the worker died: evaluate its chunk here
                out.update({j[0]: _evaluate(module, j) for j in chunk})

    send()
    while head < tail:
        collect(wait=False)
        send()
        out[jobs[head][0]] = _evaluate(module, jobs[head])
        head += 1
    collect(wait=True)
    return out
