"""Step 3 of many compiles from one nvdisasm start (issue #29): nvdisasm spends about 0.35 s of CPU
starting, whatever the cubin, which is a quarter to a third of nvcc's own time on small units.

A :class:`SassBatch` gathers a group of compiles running in threads (``check`` compiles the units
ahead, :mod:`cudalens.pipeline.compile_ahead`). Each compile takes a :class:`Member`, hands its cubin
to :meth:`Member.disassemble` (compile_file's ``disassembler``) and waits, its compile slot released
so the next unit compiles meanwhile (the last member runs the batch in its own slot); a member that will not (its compile failed, ptxas compiled no
kernel, the compile cache had it) calls :meth:`Member.leave`. When every member has arrived or
left, the cubins are disassembled together (:func:`cudalens.compiled.sass_elf.disassemble_many`,
``parts`` nvdisasm calls at once) and each member gets exactly what its own call would have given.
A batch that fails leaves each member to its own call.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cudalens.compiled.sass import FunctionSass, disassemble_one

#: one member's cubin: (nvdisasm, cubin, cc, analyzed file, the toolchain's environment)
_Item = tuple[str, Path, str, str, Mapping[str, str]]


class SassBatch:
    """One group of ``members`` compiles; see the module docstring. Each takes its :meth:`member`.
    ``slot``: the compile slot a member holds while it compiles, released while it waits here."""

    def __init__(self, members: int, parts: int = 1, slot: threading.Semaphore | None = None) -> None:
        self._cond = threading.Condition()
        self._open = members
        self._parts = max(1, parts)
        self._slot = slot
        self._items: list[_Item] = []
        self._results: list[dict[str, FunctionSass] | None] | None = None
        self._state = "gathering"  # then "running", "done"

    def member(self) -> Member:
        """One compile's place in the batch."""
        return Member(self)

    def _arrive(self, item: _Item | None) -> tuple[int, bool]:
        """(index of the item, or -1; whether this arrival completes the group)."""
        with self._cond:
            if self._state != "gathering":
                return -1, False
            index = -1
            if item is not None:
                index = len(self._items)
                self._items.append(item)
            self._open -= 1
            return index, self._open <= 0

    def _wait(self, index: int, fire: bool) -> dict[str, FunctionSass] | None:
        if fire:  # the last member runs the batch in its own compile slot: the batch is its step 3
            self._run()
        elif self._slot is not None:  # the next unit compiles meanwhile
            self._slot.release()
        try:
            with self._cond:
                self._cond.wait_for(lambda: self._state == "done")
                return self._results[index] if self._results is not None else None
        finally:
            if self._slot is not None and not fire:
                self._slot.acquire()

    def _run(self) -> None:
        with self._cond:
            if self._state != "gathering":
                return
            self._state = "running"
            items = list(self._items)
        results: list[dict[str, FunctionSass] | None] | None
        try:
            results = _disassemble_parts(items, self._parts) if items else []
        except Exception:  # noqa: BLE001 - each member makes its own call, which reports the error
            results = None
        with self._cond:
            self._results = results
            self._state = "done"
            self._cond.notify_all()


class Member:
    """A compile's place in a :class:`SassBatch`: :meth:`disassemble` is compile_file's
    ``disassembler``; :meth:`leave` when the compile ends (a no-op once it has arrived)."""

    def __init__(self, batch: SassBatch) -> None:
        self._batch = batch
        self._counted = False

    def disassemble(self, nvdisasm: str, cubin: Path, cc: str, source: str,
                    env: Mapping[str, str]) -> dict[str, FunctionSass]:
        got = None
        if not self._counted:  # a second cubin of the same compile (a retry) makes its own call
            self._counted = True
            index, fire = self._batch._arrive((nvdisasm, cubin, cc, source, env))
            if index >= 0:
                got = self._batch._wait(index, fire)
        return got if got is not None else disassemble_one(nvdisasm, cubin, cc, source, env)

    def leave(self) -> None:
        if not self._counted:
            self._counted = True
            _index, fire = self._batch._arrive(None)
            if fire:
                self._batch._run()


def _disassemble_parts(items: list[_Item], parts: int) -> list[dict[str, FunctionSass] | None]:
    """Each item's SASS; items of one (nvdisasm, cc) in ``parts`` calls at once."""
    from cudalens.compiled.sass_elf import disassemble_many

    out: list[dict[str, FunctionSass] | None] = [None] * len(items)
    jobs: list[tuple[list[int], Any]] = []
    for key in dict.fromkeys((i[0], i[2]) for i in items):
        idx = [k for k, i in enumerate(items) if (i[0], i[2]) == key]
        n = min(parts, len(idx))
        jobs.extend((idx[p::n], key) for p in range(n))

    def one(chunk: list[int], key: tuple[str, str]) -> None:
        nvdisasm, cc = key
        got = disassemble_many(nvdisasm, cc, [(items[k][1], items[k][3]) for k in chunk], items[chunk[0]][4])
        for k, sass in zip(chunk, got):
            out[k] = sass

    if len(jobs) == 1:
        one(*jobs[0])
    else:
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            for f in [pool.submit(one, chunk, key) for chunk, key in jobs]:
                f.result()
    return out
