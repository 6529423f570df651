"""Executions of predicated code that the lane machine does not make: ptxas turns the short side of
a branch (no loop in it) into predicated instructions, which every warp reaching the branch
executes, also a warp with no lane on that side. Nsight Compute counts those executions (with no
wavefront and no sector), so its per-instruction averages over them differ from the model's over the
warps that took the side. Per memory instruction on such a side, :func:`count_skipped` adds to its
record the warp executions of the branch whose lanes all went the other way (``MemRecord.skipped``).
Which lines ptxas did predicate is known from the SASS (the measured side); the model gives the
figure for both cases.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from cudalens.access.ptx_exec import WARP, MemRecord
from cudalens.compiled.ptx import Function, type_bytes

_SPACES = ("global", "shared")


def count_skipped(fn: Function, mem_v: list[dict[int, MemRecord]], row_variant: np.ndarray,
                  runs: list[tuple[int, np.ndarray, np.ndarray, int, str]],
                  sides: Mapping[int, tuple[frozenset[int], frozenset[int]]]) -> None:
    """``runs``: every conditional branch execution of the run (branch, lanes at it, lanes taking
    it, ...); ``sides``: ptx_control.branch_sides. Records of instructions no warp executed are
    made (with no request) when some warp skipped them."""
    mine = [r for r in runs if r[0] in sides]
    if not mine:
        return
    nv = len(mem_v)
    act = np.stack([r[1] for r in mine]).reshape(len(mine), -1, WARP)
    tk = np.stack([r[2] for r in mine]).reshape(act.shape)
    live = act.any(axis=2)
    skip = np.stack([live & ~tk.any(axis=2), live & ~(act & ~tk).any(axis=2)])  # taken side empty, fall side empty
    per: dict[int, np.ndarray] = {}
    for e, r in enumerate(mine):
        for s, side in enumerate(sides[r[0]]):
            rows = skip[s][e]
            if not side or not rows.any():
                continue
            n = np.bincount(row_variant[rows], minlength=nv)
            for i in side:
                per[i] = per[i] + n if i in per else n
    for i, n in per.items():
        ins = fn.instructions[i]
        space = next((x for x in _SPACES if x in ins.parts), None)
        if ins.base not in ("ld", "ldu", "st") or space is None:
            continue
        vec = 4 if "v4" in ins.parts else 2 if "v2" in ins.parts else 1
        width = vec * (type_bytes(ins.parts[-1]) or 4)
        for v in np.nonzero(n)[0].tolist():
            rec = mem_v[v].setdefault(i, MemRecord(i, space, "store" if ins.base == "st" else "load", width))
            rec.skipped += int(n[v])
