"""Each file's whole analysis in a worker process with a hard deadline and a memory cap (issue #25).

:func:`run_limited` forks one child per file, at most ``jobs`` at a time. The child becomes the
leader of its own process group (so nvcc and the model worker it starts die with it), caps its
address space (``resource.setrlimit(RLIMIT_AS)``: its size at the fork plus ``memory_mb``), runs
the file's function and writes the result (pickled, tree-sitter nodes left out: the reports read
the model's facts, never its syntax tree) to a private folder. The parent waits; at the deadline it
kills the child's process group. A file that is stopped, that runs out of memory or whose worker
dies is reported in one line naming the stage it was in and the limit; the other files finish.

The stage is what the child last wrote through :func:`mark` (parse, model, compile, rules, report).
Where fork is not available (not Linux/macOS), the function runs in process, without the limits.
"""

from __future__ import annotations

import io
import os
import pickle
import resource
import select
import signal
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cudalens.errors import CudalensError

#: the defaults of ``check`` and ``analyze``
DEFAULT_DEADLINE_S = 60.0
DEFAULT_MEMORY_MB = 4096

_stage_file: str | None = None


@dataclass(frozen=True)
class FileLimits:
    """Hard limits of one file's analysis: seconds of wall time and MB of memory over the start."""

    seconds: float = DEFAULT_DEADLINE_S
    memory_mb: int = DEFAULT_MEMORY_MB


def mark(stage: str) -> None:
    """Record the stage the analysis of this process's file is in (a no-op outside a worker)."""
    if _stage_file is not None:
        try:
            with open(_stage_file, "w", encoding="utf-8") as fh:
                fh.write(stage)
        except OSError:
            pass


class _Pickler(pickle.Pickler):
    """Pickles a result with its tree-sitter trees and nodes replaced by None."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj).__module__.startswith("tree_sitter"):
            return (type(None), ())
        return NotImplemented


def _vm_mb() -> float:
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def _child(fn: Callable[[str], Any], item: str, out: str, stage: str, memory_mb: int) -> int:
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    run_item(fn, item, out, stage, memory_mb)
    return 0


def run_item(fn: Callable[[str], Any], item: str, out: str, stage: str, memory_mb: int,
             hard: int | None = None) -> str:
    """In a worker: ``fn(item)`` with the address space capped at its size now plus ``memory_mb`` (the
    hard limit too, unless ``hard`` is given: a worker that goes on to other items keeps it), the result
    written to ``out`` (pickled), the stages to ``stage``; returns the result's kind (ok, memory, error)."""
    global _stage_file
    _stage_file = stage
    cap = int((_vm_mb() + memory_mb) * 2**20)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap if hard is None else hard))
    except (ValueError, OSError):
        pass
    try:
        value: Any = ("ok", fn(item))
    except MemoryError:
        value = ("memory", None)
    except BaseException as exc:  # noqa: BLE001 - the parent decides; the exception object crosses as is
        value = ("error", exc)
    buf = io.BytesIO()
    try:
        _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    except MemoryError:
        value = ("memory", None)
        buf = io.BytesIO(pickle.dumps(value))
    except Exception as exc:  # noqa: BLE001 - an exception that does not pickle: its text only
        buf = io.BytesIO(pickle.dumps(("error", RuntimeError(str(exc)))))
    with open(out + ".part", "wb") as fh:
        fh.write(buf.getvalue())
    os.replace(out + ".part", out)
    return str(value[0])


class Stopped(CudalensError):
    """A file's worker stopped at a limit or died: ``str()`` is the one line that says so."""


def run_one(fn: Callable[[], Any], what: str, limits: FileLimits) -> Any:
    """``fn()`` in one worker under ``limits`` (the project's launch table, the report's rendering);
    its value, or the exception it raised; :class:`Stopped` (``what: stopped in the STAGE stage at
    ...``) raised at the deadline or the memory cap."""
    got = run_limited([what], lambda _what: fn(), limits)[what]
    if isinstance(got, BaseException):
        raise got
    return got


def run_limited(items: Iterable[str], fn: Callable[[str], Any], limits: FileLimits, jobs: int = 1,
                done: Callable[[str, Any], None] | None = None) -> dict[str, Any]:
    """``fn(item)`` for every item, each in its own worker under ``limits``; at most ``jobs`` at once.

    Returns {item: result}, where a result is ``fn``'s value, the exception ``fn`` raised, or a
    :class:`Stopped` (deadline, memory cap, worker died). ``done(item, result)`` is called as each
    finishes (in the order they finish). Each worker's deadline counts from its start. (Workers that take
    one item after another under the same limits: :func:`cudalens.pipeline.worker_pool.run_reused`.)"""
    order = list(items)
    if not hasattr(os, "fork"):
        out: dict[str, Any] = {}
        for it in order:
            try:
                out[it] = fn(it)
            except Exception as exc:  # noqa: BLE001
                out[it] = exc
            if done is not None:
                done(it, out[it])
        return out
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="cudalens-work-") as tmp:
        pending = list(enumerate(order))
        running: dict[int, tuple[int, str, float]] = {}
        try:
            _loop(pending, running, tmp, fn, limits, jobs, results, done)
        finally:  # interrupted (Ctrl-C) or failed: no worker outlives the run
            for pid in running:
                _kill_group(pid)
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
    return {it: results[it] for it in order}


def _loop(pending: list[tuple[int, str]], running: dict[int, tuple[int, str, float]], tmp: str,
          fn: Callable[[str], Any], limits: FileLimits, jobs: int, results: dict[str, Any],
          done: Callable[[str, Any], None] | None) -> None:
    """Start workers while slots are free; collect each as it ends or passes its deadline. With
    ``jobs`` > 1 the ended workers' slots are filled again before their results are read and handed
    to ``done`` (the parent's part then overlaps the running workers'); with one job, before (serial)."""
    ended: list[tuple[int, str, Any]] = []  # (index, item, wait status, or the Stopped of a deadline)

    def start() -> None:
        while pending and len(running) < max(1, jobs):
            i, it = pending.pop(0)
            base = os.path.join(tmp, str(i))
            pid = os.fork()
            if pid == 0:  # the worker
                code = 1
                try:
                    code = _child(fn, it, base + ".out", base + ".stage", limits.memory_mb)
                finally:
                    os._exit(code)
            try:
                os.setpgid(pid, pid)  # as the worker does itself: whichever runs first
            except OSError:
                pass
            running[pid] = (i, it, time.monotonic())

    while pending or running or ended:
        if jobs > 1:
            start()
        for i, it, status in ended:
            res = status if isinstance(status, Stopped) else _collect(it, os.path.join(tmp, str(i)), status, limits)
            results[it] = res
            if done is not None:
                done(it, res)
        if jobs <= 1:
            start()
        ended = []
        if not running:
            continue
        now = time.monotonic()
        wait_for_any(running, min(t0 + limits.seconds - now for _i, _it, t0 in running.values()))
        for pid, (i, it, t0) in list(running.items()):
            base = os.path.join(tmp, str(i))
            got, status = os.waitpid(pid, os.WNOHANG)
            if got == 0 and time.monotonic() - t0 <= limits.seconds:
                continue
            if got == 0:  # past the deadline: the worker and whatever it started
                _kill_group(pid)
                os.waitpid(pid, 0)
                status = Stopped(f"{it}: stopped in the {_stage(base)} stage at the deadline of "
                                 f"{limits.seconds:g} s")
            else:
                _kill_group(pid, reaped=True)  # a model worker or compiler it left behind
            del running[pid]
            ended.append((i, it, status))


def wait_for_any(pids: Iterable[int], timeout: float | None, readable: Iterable[int] = ()) -> None:
    """Sleep until one of the processes ``pids`` (children not yet reaped) ends, one of the file
    descriptors ``readable`` can be read, or ``timeout`` seconds pass (None: no limit; more than an hour:
    an hour, as select takes no unbounded number). Where Linux gives a process a file descriptor
    (os.pidfd_open) the end itself wakes the caller; elsewhere it waits at most 0.02 s (a readable
    descriptor still wakes it at once), and the caller looks again."""
    timeout = None if timeout is None else min(max(0.0, timeout), 3600.0)
    fds: list[int] = []
    try:
        for pid in pids:
            fds.append(os.pidfd_open(pid))
    except (AttributeError, OSError):
        for fd in fds:
            os.close(fd)
        select.select(list(readable), [], [], 0.02 if timeout is None else min(0.02, timeout))
        return
    try:
        select.select([*fds, *readable], [], [], timeout)
    finally:
        for fd in fds:
            os.close(fd)


def _kill_group(pid: int, reaped: bool = False) -> None:
    """SIGKILL to the worker's process group; to the worker alone while it is not yet reaped and its
    group is not formed (once reaped, its id may belong to another process)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if not reaped:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _stage(base: str) -> str:
    try:
        with open(base + ".stage", encoding="utf-8") as fh:
            return fh.read().strip() or "start"
    except OSError:
        return "start"


def _collect(item: str, base: str, status: int, limits: FileLimits) -> Any:
    try:
        with open(base + ".out", "rb") as fh:
            kind, value = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError, MemoryError, AttributeError, ImportError, TypeError):
        why = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}")
        return Stopped(f"{item}: the analysis died in the {_stage(base)} stage ({why}; memory cap "
                       f"{limits.memory_mb} MB)")
    if kind == "memory":
        return Stopped(f"{item}: stopped in the {_stage(base)} stage at the memory cap of {limits.memory_mb} MB")
    return value
