"""``check``'s translation units compiled ahead of their analyses, in one background process (issue #29).

Each unit's compile is the one its analysis would make (:func:`cudalens.pipeline.compile_step.compile_one`:
same flags, macros, instantiations, failure diagnosis), ``jobs`` at a time. What changes is step 3:
the units are taken in groups of ``group`` x ``jobs`` (in the order given) and the SASS of a group
comes from ``jobs`` nvdisasm starts at once (:class:`cudalens.compiled.sass_batch.SassBatch`), not
one per unit.

The process writes each unit's outcome, pickled, to a private folder; the per-file workers
(:func:`cudalens.pipeline.isolated.run_limited`) start once it has ended (:meth:`CompileAhead.wait`), the
largest PTX first, so that ``jobs`` processes work at a time (compiles first, then analyses: ``-j 1`` is
serial). A unit whose
outcome cannot be stored, or that the process did not reach (it died, or was stopped), is compiled
by its own worker as before.
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cudalens.pipeline.isolated import wait_for_any

#: units whose SASS one nvdisasm start serves (times jobs): each start costs about 0.35 s of CPU, and the
#: analyses wait for every compile anyway; a group's members keep their private folders until its batch
GROUP = 64


class CompileAhead:
    """The background compile of ``units`` (see the module docstring); the parent waits for it
    (:meth:`wait`), asks :meth:`outcome` and :meth:`size`, and :meth:`close` ends it."""

    def __init__(self, units: list[str], cc: str, defines: Mapping[str, Mapping[str, Any]], build: Any,
                 instantiate: Mapping[str, tuple[str, ...]], jobs: int, group: int = GROUP,
                 seconds_each: float | None = None) -> None:
        self._index = {p: i for i, p in enumerate(units)}
        # past the time each unit's own worker would have had, jobs at a time, the process is stopped and
        # the units it did not finish are compiled by their workers (under their own deadlines)
        rounds = -(-len(units) // max(1, jobs))
        self._stop_at = time.monotonic() + seconds_each * rounds if seconds_each is not None else None
        self._got: dict[str, Any] = {}
        self._folder = tempfile.mkdtemp(prefix="cudalens-ahead-")
        self._pid: int | None = os.fork()
        if self._pid == 0:  # the background process: never returns
            code = 1
            try:
                os.setpgid(0, 0)
                _serve(units, cc, defines, build, instantiate, jobs, group, self._folder)
                code = 0
            finally:
                os._exit(code)
        try:
            os.setpgid(self._pid, self._pid)
        except OSError:
            pass

    def wait(self) -> None:
        """Block until the process has ended (stopped past its deadline), then read every unit's outcome:
        the analyses start once every compile has ended (``jobs`` processes at a time in all)."""
        while self._pid is not None:
            timeout = None if self._stop_at is None else max(0.0, self._stop_at - time.monotonic())
            if timeout == 0.0:
                self._kill()
                break
            wait_for_any((self._pid,), timeout)
            try:
                got, _status = os.waitpid(self._pid, os.WNOHANG)
            except ChildProcessError:
                got = self._pid
            if got:
                self._pid = None
        for path, i in self._index.items():
            try:
                with open(os.path.join(self._folder, f"{i}.pkl"), "rb") as fh:
                    self._got[path] = pickle.load(fh)
            except Exception:  # noqa: BLE001 - not reached or unreadable: the worker compiles the unit itself
                self._got[path] = None

    def covers(self, path: str) -> bool:
        """Whether ``path`` is one of the units it compiles."""
        return path in self._index

    def outcome(self, path: str) -> Any:
        """The unit's ``("value", (result, notes))`` or ``("error", exception)``; None where its worker
        compiles it (or before :meth:`wait`)."""
        return self._got.get(path)

    def size(self, path: str) -> int:
        """The length of the unit's PTX (0 without one): its analysis's cost, roughly, to start the
        largest first."""
        got = self._got.get(path)
        result = got[1][0] if got is not None and got[0] == "value" else None
        return len(getattr(result, "ptx", "") or "")

    def close(self) -> None:
        """Stop the process (and the compiles it started) if it still runs; remove the folder."""
        self._kill()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _kill(self) -> None:
        if self._pid is not None:
            try:
                os.killpg(self._pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.waitpid(self._pid, 0)
            except ChildProcessError:
                pass
            self._pid = None


def _serve(units: list[str], cc: str, defines: Mapping[str, Mapping[str, Any]], build: Any,
           instantiate: Mapping[str, tuple[str, ...]], jobs: int, group: int, folder: str) -> None:
    """The background process: every unit compiled, ``jobs`` at a time, each group's SASS together."""
    from cudalens.compiled.cache import RunMemo
    from cudalens.compiled.sass_batch import SassBatch
    from cudalens.pipeline.compile_step import compile_one

    jobs = max(1, jobs)
    group *= jobs  # each of the jobs nvdisasm calls of a batch takes about ``group`` cubins
    slot = threading.Semaphore(jobs)
    batches = [SassBatch(len(units[g:g + group]), parts=jobs, slot=slot) for g in range(0, len(units), group)]
    memo = RunMemo()  # the headers the units share: resolved and digested once

    def member(i: int, path: str) -> None:
        place = batches[i // group].member()
        slot.acquire()
        try:
            got: tuple[str, Any] = ("value", compile_one(path, cc, defines.get(path, {}), build,
                                                          instantiate=instantiate.get(path, ()),
                                                          disassembler=place.disassemble, memo=memo))
        except BaseException as exc:  # noqa: BLE001 - the worker raises it, as its own compile would
            got = ("error", exc)
        finally:
            place.leave()
            slot.release()
        _store(os.path.join(folder, f"{i}.pkl"), got)

    with ThreadPoolExecutor(max_workers=2 * group + jobs, thread_name_prefix="cudalens-ahead") as pool:
        for f in [pool.submit(member, i, p) for i, p in enumerate(units)]:
            f.result()


def _store(path: str, value: Any) -> None:
    """``value`` pickled to ``path`` whole or not at all (the parent reads a file once it exists); a
    value that cannot be pickled is stored as None (the worker compiles the unit itself)."""
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001
        data = pickle.dumps(None)
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def start_compiles(units: list[str], cc: str, defines: Mapping[str, Any], build: Any,
                   wanted: Mapping[str, tuple[str, ...]], jobs: int, limits: Any) -> CompileAhead | None:
    """The units' compiles started in the background, with the macros each unit's own compile would get;
    None for fewer than two units (a unit's worker compiles it beside its front end) or where fork is not
    available."""
    if not hasattr(os, "fork") or len(units) < 2:
        return None
    from cudalens.pipeline.defines import compiler_defines
    from cudalens.source.parse import parse_file

    defs: dict[str, Any] = {}
    if defines:  # as in the unit's own worker: the --define values its syntax takes
        for p in units:
            try:
                predefined = tuple(build.header_macros(p).items()) if build is not None else ()
                defs[p] = compiler_defines(parse_file(p, predefined), defines)
            except Exception:  # noqa: BLE001 - its own worker meets the error and reports it
                pass
        units = [p for p in units if p in defs]
    return CompileAhead(units, cc, defs, build, wanted, jobs, seconds_each=limits.seconds) if len(units) > 1 else None


class Compiles:
    """Several background compiles read as one: ``check -j N`` (N > 1) compiles the units no stored
    analysis can answer while the launch table is resolved, and the other misses after it."""

    def __init__(self, *parts: CompileAhead | None) -> None:
        self.parts = [p for p in parts if p is not None]

    def covers(self, path: str) -> bool:
        return any(p.covers(path) for p in self.parts)

    def wait(self) -> None:
        for p in self.parts:
            p.wait()

    def outcome(self, path: str) -> Any:
        return next((got for p in self.parts if (got := p.outcome(path)) is not None), None)

    def size(self, path: str) -> int:
        return max((p.size(path) for p in self.parts), default=0)

    def close(self) -> None:
        for p in self.parts:
            p.close()
