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

from typing import Any, Mapping

import numpy as np

from cudalens.access.ptx_exec import MemRecord
from cudalens.compiled.ptx import Function, type_bytes

_SPACES = ("global", "shared")


def count_skipped(fn: Function, mem_v: list[dict[int, MemRecord]], row_variant: np.ndarray,
                  runs: list[tuple[int, np.ndarray, np.ndarray, int, str]],
                  sides: Mapping[int, tuple[frozenset[int], frozenset[int]]], on: np.ndarray, taken: np.ndarray) -> None:
    """``runs``: every conditional branch execution of the run (branch, lanes at it, lanes taking
    it, ...); ``sides``: ptx_control.branch_sides; ``on``, ``taken``: per execution of ``runs`` and
    warp, its lanes at the branch and those taking it (a part of them). Records of instructions no
    warp executed are made (with no request) when some warp skipped them."""
    sel = [e for e, r in enumerate(runs) if r[0] in sides]
    if not sel:
        return
    mine = [runs[e] for e in sel]
    nv = len(mem_v)
    on, taken = on[sel], taken[sel]
    live = on > 0
    key = np.arange(len(mine))[:, None] * nv + row_variant[None, :]
    per_run = [np.bincount(key[live & ~side_on], minlength=len(mine) * nv).reshape(len(mine), nv)
               for side_on in (taken > 0, taken < on)]  # the taken side empty, the fall side empty
    by_branch: dict[int, list[int]] = {}
    for e, r in enumerate(mine):
        by_branch.setdefault(r[0], []).append(e)
    memory = {i: space for i, space in ((ins.index, next((x for x in _SPACES if x in ins.parts), None))
                                        for ins in fn.instructions if ins.base in ("ld", "ldu", "st")) if space}
    per: dict[int, np.ndarray] = {}
    for b, es in by_branch.items():
        for s, side in enumerate(sides[b]):
            n = per_run[s][es].sum(axis=0)
            if side and n.any():
                for i in side:
                    if i in memory:  # (the only records it makes)
                        per[i] = per[i] + n if i in per else n
    for i, n in per.items():
        ins = fn.instructions[i]
        space = memory[i]
        vec = 4 if "v4" in ins.parts else 2 if "v2" in ins.parts else 1
        width = vec * (type_bytes(ins.parts[-1]) or 4)
        for v in np.nonzero(n)[0].tolist():
            rec = mem_v[v].setdefault(i, MemRecord(i, space, "store" if ins.base == "st" else "load", width))
            rec.skipped += int(n[v])


def predicated_figures(v: Mapping[str, Any], by_trial: Mapping[tuple, Mapping[str, Any]]) -> dict[str, Any]:
    """A line's figures over the executions of warps with no lane on too (``nway_predicated``,
    ``value_predicated`` of ptx_eval.LinePrediction) from its figures per parameter trial (``v``: the
    base trial's): one figure where every trial gives the same, else (None and) their range over
    the trials (``..._range``: how many warps have no lane on depends on a parameter nobody gave)."""
    out: dict[str, Any] = {}
    for mine, plain, field in (("nway_pred", "nway", "nway_predicated"), ("value_pred", "value", "value_predicated")):
        out[field] = v.get(mine)
        figs: set[float] = {float(f) for x in by_trial.values()
                            if (f := x[mine] if x.get(mine) is not None else x.get(plain)) is not None}
        if len(figs) > 1 and any(x.get(mine) is not None for x in by_trial.values()):
            out[field], out[field + "_range"] = None, (min(figs), max(figs))
    return out
