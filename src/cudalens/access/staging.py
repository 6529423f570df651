"""Would a shared-memory tile serve a strided global load coalesced? The facts rule SH3 reads
(:func:`staging`), computed for the warp access model (:mod:`cudalens.access.model`).

A warp whose lanes are ``stride`` elements apart fetches a sector per lane (or nearly) and uses a
few bytes of each. Staging helps when the requests of a block *together* read a dense region: the
block can then load that region once, coalesced, into ``__shared__`` memory and read it strided from
there. The group looked at is every warp of block 0, over ``stride`` successive iterations of the
innermost loop when the index uses its variable (at most :data:`MAX_ITERATIONS`; iterations whose
loop condition fails count no lanes), else in the first iteration only. ``a[col * 32 + i]`` over
``i < 32`` reads 32 whole rows of 32 floats: a dense region.

The iterations are evaluated at once: the loop variable is a column of iteration numbers, the
threads a row, and numpy broadcasts the index and the guard over both (as each iteration alone
would give; a guard that cannot be evaluated so is evaluated one iteration at a time, as before).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cudalens.access import lanes as L
from cudalens.access import memory as M
from cudalens.source import expr as E

MAX_ITERATIONS = 64


def staging(a: Any, ev: Any, b0: dict[str, Any], stride: int, width: int) -> dict[str, Any] | None:
    """The staging facts of access ``a`` (a :class:`cudalens.source.model.Access`) under kernel
    evaluation ``ev`` with block 0's values ``b0``. Keys: ``over`` ("loop" | "block"), ``loop_line``
    (for "loop"), ``requests`` (warp requests in the group), ``sectors`` (sectors those requests fetch
    today, summed), ``sectors_staged`` (distinct sectors of the region they read: what coalesced tile
    loads would fetch), ``used`` (share of the staged sectors' bytes that some request reads; 1.0 is a
    dense tile). None when the group has fewer than two requests."""
    inner = next((lp for lp in reversed(a.loop_context) if lp[0]), None)
    if inner is not None and not E.unknowns(inner[2]) and sym_used(a.index_expr, inner[0]):
        sym, start, step, line = inner
        rows, acts = _iterations(a, ev, b0, sym, start, step, min(stride, MAX_ITERATIONS))
        fact: dict[str, Any] = {"over": "loop", "loop_line": line}
    else:
        rows = L.as_warps(L.per_thread(L.evaluate(a.index_expr, b0), ev.nthreads), ev.nthreads, 0)
        acts = L.as_warps(ev.mask(a.mask_expr, b0)[0], ev.nthreads, False)
        fact = {"over": "block"}
    requests, sectors, union, nbytes = group_sectors(rows, acts, width)
    if requests < 2 or union == 0:
        return None
    fact.update(requests=requests, sectors=sectors, sectors_staged=union, used=round(nbytes / (union * 32), 4))
    return fact


def sym_used(e: E.Expr, sym: str) -> bool:
    return sym in E.symbols(e)


def _iterations(a: Any, ev: Any, b0: dict[str, Any], sym: str, start: E.Expr, step: E.Expr,
                count: int) -> tuple[np.ndarray, np.ndarray]:
    """(index, active) rows of 32 lanes, per warp of block 0 per iteration ``0 .. count-1`` of the loop
    over ``sym`` (``start + j * step``), in that order."""
    v = dict(b0)
    v[sym] = ("b", "+", start, ("b", "*", ("n", np.arange(count, dtype=np.int64)[:, None]), step))
    index = _per_iteration(L.evaluate(a.index_expr, v), count, ev.nthreads)
    if a.mask_expr is None:
        active = np.ones((count, ev.nthreads), dtype=bool)
    else:
        try:
            active = _per_iteration(L.evaluate(a.mask_expr, v), count, ev.nthreads) != 0
        except (E.Unknown, ValueError, TypeError, OverflowError, RecursionError):
            active = np.stack([ev.mask(a.mask_expr, {**b0, sym: E.fold(("b", "+", start, ("b", "*", E.num(j), step)))})[0]
                               for j in range(count)])
    return L.as_warps(index, ev.nthreads, 0), L.as_warps(active, ev.nthreads, False)


def _per_iteration(value: Any, count: int, nthreads: int) -> np.ndarray:
    """:func:`cudalens.access.lanes.per_thread` with a row per iteration: (count, nthreads) int64."""
    arr = L.as_int64(value)
    if arr.ndim == 1:  # the threads alone (the iteration number cancelled out)
        arr = arr[None, :]
    return np.broadcast_to(arr, (count, nthreads))


def group_sectors(index: np.ndarray, active: np.ndarray, width: int) -> tuple[int, int, int, int]:
    """(requests, sectors summed over the requests, sectors of their union, bytes of distinct elements).

    ``index``/``active`` hold one row of 32 lanes per warp request of the group.
    """
    live = active.any(axis=1)
    index, active = index[live], active[live]
    if not live.any():
        return 0, 0, 0, 0
    per_request, _ideal = M.global_sectors(index * width, active, width)
    flat_idx, flat_act = index.reshape(1, -1), active.reshape(1, -1)
    union, _ = M.global_sectors(flat_idx * width, flat_act, width)
    distinct = int(M.distinct_addresses(flat_idx, flat_act)[0])
    return int(live.sum()), int(per_request.sum()), int(union[0]), distinct * width
