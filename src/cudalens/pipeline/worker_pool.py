"""Workers that analyse one file after another, each file under its own limits (issue #29).

:func:`cudalens.pipeline.isolated.run_limited` forks a worker per file. Each fresh process pays again
for what a longer one has already: its own copies of the pages it writes, its allocator's arenas, its
caches' first answers. On llm.c's 22 units, each analysis in its own fork cost 4.0-4.5 s of CPU in all, the
22 in one forked process 3.2-3.4 s. :func:`run_reused` keeps up to ``jobs`` workers and
hands each the next file when it has finished one; a file's limits stay its own:

* deadline: counted from the moment the file is handed over; past it, the worker's process group is killed,
  the file is reported stopped in its stage (as before), and a fresh worker takes the next file;
* memory: before each file the worker caps its address space (soft limit) at its size then plus the cap;
  a worker that ran out of memory ends after writing its result, and a fresh one takes the next file;
* a worker that dies reports its file as died in its stage, and a fresh one takes the next file.

The parent sends a worker the index of its next file through a pipe (never a file name: indices of the
list both sides hold from the fork) and the worker answers with the index when the result is written, and
whether it takes another (not after running out of memory). At the end the parent closes the pipes; each
worker ends at the end of its input.
"""

from __future__ import annotations

import os
import resource
import select
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from cudalens.pipeline.isolated import (
    FileLimits,
    Stopped,
    _collect,
    _kill_group,
    _stage,
    run_item,
    run_limited,
    wait_for_any,
)

#: (in ``ended``) the worker answered: its item's result is written
ANSWERED = object()


@dataclass
class _Worker:
    commands: int  # the parent's end of the pipe that gives the worker its next index
    answers: int  # the parent's end of the pipe where the worker says it has finished one
    item: tuple[int, str, float] | None = None  # (index, item, when it was handed over) while it works
    heard: bytearray = field(default_factory=bytearray)
    ending: bool = False  # it said it ends after its last item (out of memory): no other is handed to it


def run_reused(items: Iterable[str], fn: Callable[[str], Any], limits: FileLimits, jobs: int = 1,
               done: Callable[[str, Any], None] | None = None) -> dict[str, Any]:
    """:func:`cudalens.pipeline.isolated.run_limited` (same arguments, same results) with workers that take one
    item after another (see the module docstring); one item, or no fork: run_limited itself."""
    order = list(items)
    if not hasattr(os, "fork") or len(order) < 2:
        return run_limited(order, fn, limits, jobs, done)
    results: dict[str, Any] = {}
    workers: dict[int, _Worker] = {}
    with tempfile.TemporaryDirectory(prefix="cudalens-work-") as tmp:
        try:
            _loop(order, workers, tmp, fn, limits, max(1, jobs), results, done)
        finally:  # the end of input ends each worker; one that does not (interrupted, failed) is killed
            for w in workers.values():
                os.close(w.commands)
            deadline = time.monotonic() + 5.0
            for pid, w in workers.items():
                if w.item is not None:
                    _kill_group(pid)
                _reap(pid, deadline)
                _kill_group(pid, reaped=True)  # whatever it left behind
                os.close(w.answers)
    return {it: results[it] for it in order}


def _reap(pid: int, deadline: float) -> None:
    """Wait for the worker to end until ``deadline``, then kill it (not yet reaped: its id is still its own)."""
    try:
        while time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
            wait_for_any((pid,), deadline - time.monotonic())
        _kill_group(pid)
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _spawn(order: list[str], workers: dict[int, _Worker], fn: Callable[[str], Any], tmp: str,
           memory_mb: int) -> int:
    commands_r, commands_w = os.pipe()
    answers_r, answers_w = os.pipe()
    theirs = [fd for w in workers.values() for fd in (w.commands, w.answers)]
    pid = os.fork()
    if pid == 0:  # the worker
        code = 1
        try:
            for fd in (commands_w, answers_r, *theirs):
                os.close(fd)
            code = _serve(order, fn, commands_r, answers_w, tmp, memory_mb)
        finally:
            os._exit(code)
    os.close(commands_r)
    os.close(answers_w)
    try:
        os.setpgid(pid, pid)  # as the worker does itself: whichever runs first
    except OSError:
        pass
    workers[pid] = _Worker(commands_w, answers_r)
    return pid


def _serve(order: list[str], fn: Callable[[str], Any], commands: int, answers: int, tmp: str, memory_mb: int) -> int:
    """The worker: each index read, its item run (isolated.run_item), the index written back; until the
    end of input, or a result of the kind "memory"."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = os.read(commands, 64)
            if not chunk:
                return 0
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        i = int(line)
        base = os.path.join(tmp, str(i))
        kind = run_item(fn, order[i], base + ".out", base + ".stage", memory_mb, hard)
        os.write(answers, b"%d %s\n" % (i, b"end" if kind == "memory" else b"next"))
        if kind == "memory":
            return 0


def _loop(order: list[str], workers: dict[int, _Worker], tmp: str, fn: Callable[[str], Any], limits: FileLimits,
          jobs: int, results: dict[str, Any], done: Callable[[str, Any], None] | None) -> None:
    """Hand items to free workers (forking one where none is free), collect each as it is answered, dies
    or passes its deadline. As isolated._loop: with one job, a result is handed to ``done`` before the
    next item starts (serial); with more, the freed workers are given work first."""
    pending = list(range(len(order)))
    ended: list[tuple[int, Any]] = []  # (index, ANSWERED where its result was written, else a Stopped / wait status)

    def start() -> None:
        while pending and sum(w.item is not None for w in workers.values()) < jobs:
            pid = next((p for p, w in workers.items() if w.item is None and not w.ending), None)
            if pid is None:
                pid = _spawn(order, workers, fn, tmp, limits.memory_mb)
            i = pending.pop(0)
            workers[pid].item = (i, order[i], time.monotonic())
            try:
                os.write(workers[pid].commands, b"%d\n" % i)
            except OSError:  # it has ended: seen below as dead with its item
                pass

    while pending or ended or any(w.item is not None for w in workers.values()):
        if jobs > 1:
            start()
        for i, status in ended:
            base = os.path.join(tmp, str(i))
            res = status if isinstance(status, Stopped) else _collect(order[i], base, 0 if status is ANSWERED else status,
                                                                        limits)
            results[order[i]] = res
            if done is not None:
                done(order[i], res)
        if jobs <= 1:
            start()
        ended = []
        busy = {pid: w for pid, w in workers.items() if w.item is not None}
        for pid in [p for p, w in workers.items() if w.ending and w.item is None]:
            _reap(pid, time.monotonic() + 5.0)  # it ends by itself
            _retire(pid, workers, reaped=True)
        if not busy:
            continue
        now = time.monotonic()
        wait_for_any(busy, min(w.item[2] + limits.seconds - now for w in busy.values() if w.item is not None),
                     readable=[w.answers for w in busy.values()])
        for pid, w in busy.items():
            _hear(w, ended)
            got, status = os.waitpid(pid, os.WNOHANG)
            if got:  # it ended: its item (if it had one) died with it
                if w.item is not None:
                    ended.append((w.item[0], status))
                _retire(pid, workers, reaped=True)
            elif w.item is not None and time.monotonic() - w.item[2] > limits.seconds:
                i, it = w.item[0], w.item[1]
                _kill_group(pid)
                os.waitpid(pid, 0)
                ended.append((i, Stopped(f"{it}: stopped in the {_stage(os.path.join(tmp, str(i)))} stage at the "
                                         f"deadline of {limits.seconds:g} s")))
                _retire(pid, workers, reaped=True)


def _hear(w: _Worker, ended: list[tuple[int, Any]]) -> None:
    """The indices the worker says it has finished (non-blocking: only what is there)."""
    while w.item is not None and select.select([w.answers], [], [], 0)[0]:
        chunk = os.read(w.answers, 64)
        if not chunk:
            return
        w.heard += chunk
        while b"\n" in w.heard:
            line, _, rest = bytes(w.heard).partition(b"\n")
            w.heard = bytearray(rest)
            index, _, then = line.partition(b" ")
            if w.item is not None and int(index) == w.item[0]:
                ended.append((w.item[0], ANSWERED))
                w.item, w.ending = None, then == b"end"


def _retire(pid: int, workers: dict[int, _Worker], reaped: bool) -> None:
    w = workers.pop(pid)
    _kill_group(pid, reaped=reaped)  # whatever it left behind
    os.close(w.commands)
    os.close(w.answers)
