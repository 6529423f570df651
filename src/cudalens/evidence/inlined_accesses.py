"""Accesses of ``__device__`` functions inlined into a kernel, from the compiled code.

The source model walks a kernel's own body: a load inside a helper it calls (llm.c's
``cuda_utils.cuh``, cuda-samples' ``helper_math.h``, a helper above the kernel in the same file)
gets no access record. The compiled model sees the helper's instructions inlined into the kernel,
each at the helper's file and line, with the call sites they were inlined into. For each such
line that no source record covers, :func:`inlined_accesses` makes an access record of the kernel
at the helper's line (``Access.file`` names the helper's file when it is not the kernel's),
filled with the compiled figures (:func:`cudalens.evidence.compiled_figures.fill_access`): the
rules then report it there, for the kernel that calls it, saying where it was inlined.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from typing import Any

from cudalens.quantities import PER_REQUEST
from cudalens.real_paths import real_path
from cudalens.source.model import Access, Kernel

_SPACE_OP = {q.name: key for key, q in PER_REQUEST.items()}
_SUBSCRIPT = re.compile(r"([A-Za-z_]\w*)\s*\[([^\[\]]*)\]")
_ASSIGN = re.compile(r"(?<![=!<>+\-*/%&|^])=(?!=)")


def _line_text(path: str, line: int) -> str:
    from cudalens.project.tree import source_text

    lines = source_text(path).splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def _subscript(text: str, op: str) -> tuple[str, str]:
    """(array, index) of the subscript on ``text`` that a load (right of ``=``) or a store (left of
    it) of the line most likely is; ("?", "?") when the line has none."""
    code = text.split("//", 1)[0]
    m = _ASSIGN.search(code)
    left, right = (code[:m.start()], code[m.end():]) if m else ("", code)
    for part in ((left, right) if op == "store" else (right, left)):
        found = _SUBSCRIPT.findall(part)
        if found:
            return found[0][0], " ".join(found[0][1].split())
    return "?", "?"


def _shown(path: str, kernel_file: str) -> str:
    """``path`` as the kernel's file is shown: relative the same way (``./halve.cu`` -> ``access.cuh``)."""
    if os.path.isabs(kernel_file):
        return path
    base = os.path.dirname(real_path(kernel_file))
    return os.path.normpath(os.path.join(os.path.dirname(kernel_file), os.path.relpath(path, base)))


def inlined_accesses(k: Kernel, evals: Sequence[Any]) -> tuple[Access, ...]:
    """Access records of ``k`` for the global and shared lines of the ``__device__`` functions the
    compiled code inlined into it (outside the kernel's own lines), each with the compiled figures;
    lines whose figures the compiled model does not give are left out."""
    from cudalens.compiled.toolchain import is_toolchain_file
    from cudalens.evidence.compiled_figures import fill_access, line_figures

    own = real_path(k.file)
    wanted: dict[tuple[str, int, str], list[tuple[str, int]]] = {}
    width: dict[tuple[str, int, str], int] = {}
    for ev in evals:
        for p in ev.predictions:
            real = real_path(p.file) if p.file else ""
            if not real or not p.call_sites or p.quantity not in _SPACE_OP or is_toolchain_file(real):
                continue  # (a toolkit header's inline function, __ldg: its call site is the kernel's access)
            if real == own and k.line <= p.line <= k.end_line:
                continue  # the kernel's own line: the source model's record takes the figure
            key = (real, p.line, p.quantity)
            wanted.setdefault(key, []).extend(tuple(s) for s in p.call_sites)
            if p.width:
                width[key] = max(width.get(key, 0), int(p.width))
    out: list[Access] = []
    figures: dict[str, Any] = {}
    params = tuple(p.name for p in k.params)
    for (real, line, quantity), sites in sorted(wanted.items()):
        if real not in figures:
            figures[real] = line_figures(evals, real)
        space, op = _SPACE_OP[quantity]
        array, index = _subscript(_line_text(real, line), op)
        at = sorted({f"{os.path.basename(f)}:{n}" for f, n in sites if f})
        note = f"in a __device__ function inlined at {', '.join(at[:3])}" if at else "in an inlined __device__ function"
        base = Access(line, array, space, op, width.get((real, line, quantity)), index,
                      assumptions=(f"{note}; the figures are the compiled code's",),
                      file=None if real == own else _shown(real, k.file))
        filled = fill_access(base, figures[real], params)
        if filled is base:
            continue
        out.append(dataclasses.replace(filled, figure_notes=(*filled.figure_notes, note)))
    return tuple(out)
