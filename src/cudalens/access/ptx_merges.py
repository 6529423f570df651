"""Shared accesses that ptxas merged: where the SASS holds one wide shared instruction for several
narrow PTX ones (two ``ld.shared.f32`` of neighbouring words become one ``LDS.64``), the compiled
access model evaluates the merged access (:func:`cudalens.access.ptx_eval.evaluate`)."""

from __future__ import annotations

import os
from typing import Any, Mapping

from cudalens.compiled.ptx import Function, type_bytes


def shared_merges(fn: Function, sass_lds: Mapping[Any, Mapping[int, int]], op: str = "ld",
                  files: Mapping[int, str] | None = None) -> dict[int, int]:
    """Which PTX shared loads (``op`` "ld") or stores ("st") ptxas merged into wider SASS ones,
    from the SASS of the same kernel.

    ``sass_lds``: source line, or (file name, line) with ``files`` (the module's PTX file table) -> {bytes
    per lane: number of LDS (STS) instructions of that width}.
    On a line where the SASS has fewer, wider accesses than the PTX, consecutive scalar shared
    accesses of the same base register at consecutive offsets (the first aligned to the merged
    width; in any order on the line) are grouped, widest first; loads may also be widened over a missing last element (three
    4-byte loads read as one 16-byte load: ptxas reads the aligned vector). Where every SASS access
    of a line has one width w and PTX accesses are left ungrouped (ptxas unrolled a loop and
    vectorized across its iterations), each is evaluated as the aligned w-byte access that holds
    it. Returns instruction index -> merged width (first of a group), 0 (the others of a group) or
    -w (evaluate as the aligned w-byte access holding it).
    """
    out: dict[int, int] = {}
    by_line: dict[Any, list] = {}
    for ins in fn.instructions:
        if ins.base == op and "shared" in ins.parts and ins.loc and not any(v in ins.parts for v in ("v2", "v4")):
            key = (os.path.basename(files.get(ins.loc.file, "")), ins.loc.line) if files is not None else ins.loc.line
            by_line.setdefault(key if key in sass_lds else ins.loc.line, []).append(ins)
    for line, accesses in by_line.items():
        want = dict(sass_lds.get(line, {}))
        parsed = []
        for ins in accesses:
            tok = ins.operands[1 if op == "ld" else 0].strip("[]").replace(" ", "")
            base, _, off = tok.partition("+")
            try:
                parsed.append((ins, base, int(off, 0) if off else 0, type_bytes(ins.parts[-1]) or 4))
            except ValueError:
                parsed.append((ins, base, None, 4))
        used: set[int] = set()
        for width in (16, 8):
            sizes = (width // 4, width // 4 - 1) if op == "ld" and width == 16 else (None,)
            for size in sizes:
                for ins, base, off, eb in parsed:
                    if want.get(width, 0) <= 0 or off is None or off % width or ins.index in used:
                        continue
                    n = width // eb if size is None or eb != 4 else size
                    group = [(ins, base, off, eb)] + [next((g for g in parsed if g[1] == base and g[2] == off + j * eb
                                                           and g[3] == eb and g[0].index not in used
                                                           and g[0] is not ins), None) for j in range(1, n)]
                    if all(g is not None for g in group):
                        out[ins.index] = width
                        for g in group[1:]:
                            out[g[0].index] = 0
                        used.update(g[0].index for g in group)
                        want[width] -= 1
        wide = {w for w, c in sass_lds.get(line, {}).items() if c > 0}
        if len(wide) == 1 and (w := wide.pop()) > 4:  # every SASS access of the line is w bytes wide
            for ins, _base, _off, eb in parsed:
                if ins.index not in used and eb < w:
                    out[ins.index] = -w  # vectorized across unrolled iterations: the w-byte access holding it
    return out
