"""The counts a run keeps per memory record, worked out once at the end of the run for all its
executions together (cudalens.access.ptx_run defers them): requests, lanes, lane strides, the
block-to-block address shift (global), and sectors or wavefronts with their ideal, one model call
per (space, width)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from cudalens.access import memory as M
from cudalens.access.ptx_exec import WARP, Machine


def count_deferred(m: Machine) -> None:
    """Requests, lanes and sectors (global) or wavefronts (shared) of every recorded execution: one model call
    per (space, width) for the whole run (the models work row by row: the same figures as one call per
    execution); per record the sums, and each execution's figure (``per_call``, first variant: the base trial)."""
    big = np.iinfo(np.int64).max
    for (space, width), calls in m.deferred.items():
        count, lanes, lo, hi, shifts, num, ideal = _per_execution(m, space, width, calls)
        # the (execution, variant) pairs that hold a record, in execution order, and their records
        flat = np.concatenate([np.asarray(c[3], dtype=np.int64) + k * m.V for k, c in enumerate(calls)])
        rid = np.concatenate([np.asarray(c[4], dtype=np.int64) for c in calls])
        uniq, inv = np.unique(rid, return_inverse=True)
        n = count[flat]
        req_r = np.bincount(inv, weights=n, minlength=len(uniq))
        lanes_r = np.bincount(inv, weights=lanes[flat], minlength=len(uniq))
        lo_r, hi_r = np.full(len(uniq), big), np.full(len(uniq), -big)
        if space == "global":
            lo, hi = lo[flat], hi[flat]
            ok = lo <= hi  # some neighbouring lanes both active
            np.minimum.at(lo_r, inv[ok], lo[ok])
            np.maximum.at(hi_r, inv[ok], hi[ok])
        shift_r = None
        nb = len(m.launch.blocks)
        if space == "global" and nb > 1:  # per record: the gcd of its executions' block-to-block shifts
            shift_r = np.zeros(len(uniq), dtype=np.int64)
            np.gcd.at(shift_r, inv, shifts[flat])
        num_r = ideal_r = None
        if space in ("global", "shared"):
            total = num[flat]
            num_r = np.bincount(inv, weights=total, minlength=len(uniq)).tolist()
            ideal_r = np.bincount(inv, weights=ideal[flat], minlength=len(uniq)).tolist()
            first = flat % m.V == 0
            for r, t, k in zip(rid[first].tolist(), total[first].tolist(), n[first].tolist()):
                m.records[r].per_call.append(round(t / k, 4))
        for j, (r, q, ln, lo1, hi1) in enumerate(zip(uniq.tolist(), req_r.tolist(), lanes_r.tolist(), lo_r.tolist(),
                                                      hi_r.tolist())):
            rec = m.records[r]
            rec.requests += int(q)
            rec.lanes += int(ln)
            if lo1 <= hi1:
                rec.stride_lo = lo1 if rec.stride_lo is None else min(rec.stride_lo, lo1)
                rec.stride_hi = hi1 if rec.stride_hi is None else max(rec.stride_hi, hi1)
            if shift_r is not None:
                rec.block_shift = math.gcd(rec.block_shift, int(shift_r[j]))
            if num_r is not None and ideal_r is not None:
                if space == "global":
                    rec.sectors += num_r[j]
                    rec.ideal += ideal_r[j]
                else:
                    rec.wavefronts += num_r[j]
                    rec.ideal_wavefronts += ideal_r[j]
    m.deferred.clear()


#: lanes of deferred executions worked on at a time (temporaries that stay small)
_CHUNK_LANES = 1 << 18


def _per_execution(m: Machine, space: str, width: int, calls: list) -> tuple[np.ndarray, ...]:
    """Per (execution, variant), execution-major: warps present, active lanes, least and greatest
    lane stride (global), block-to-block shift (global, two blocks or more), and the figure and
    ideal summed over the warps (global, shared); the executions a chunk at a time, of each only
    the rows present. The figures of a row, its active lanes and lane strides, are worked out once
    per class of rows alike (:func:`cudalens.access.memory.distinct_rows`: the same lanes active at
    addresses moved by a multiple of 128 bytes; those of trials that do not change the access among them)."""
    rows = len(m.row_variant)
    nb = len(m.launch.blocks)
    shifts = space == "global" and nb > 1  # (block_shifts works on every row: lanes aligned across blocks)
    row_figures = _row_figures(space, width)
    step = max(1, _CHUNK_LANES // (rows * WARP))
    out: list[list[np.ndarray]] = [[] for _ in range(7)]
    for j in range(0, len(calls), step):
        part = calls[j:j + step]
        e = len(part)
        present = np.concatenate([c[2] for c in part])
        if shifts:
            a_all = np.concatenate([_lanes(c[0]) for c in part]).reshape(-1, WARP)
            act_all = np.concatenate([c[1] for c in part]).reshape(-1, WARP)
            a, act = a_all[present], act_all[present]
            out[4].append(M.block_shifts(a_all, act_all, e, m.V, nb))
        else:
            a = np.concatenate([_lanes(c[0], c[2]) for c in part])
            act = np.concatenate([c[1].reshape(-1, WARP)[c[2]] for c in part])
        key = (np.repeat(np.arange(e) * m.V, rows) + np.tile(m.row_variant, e))[present]  # (non-decreasing)
        got = M.distinct_rows(row_figures, a, act, width) if space in ("global", "shared") else row_figures(a, act)
        out[0].append(np.bincount(key, minlength=e * m.V))
        out[1].append(np.bincount(key, weights=got[0], minlength=e * m.V))
        if space == "global":
            for k, x in enumerate(_key_strides(got[3], got[4], key, e * m.V)):
                out[2 + k].append(x)
        if space in ("global", "shared"):
            out[5].append(np.bincount(key, weights=got[1], minlength=e * m.V))
            out[6].append(np.bincount(key, weights=got[2], minlength=e * m.V))
    return tuple(np.concatenate(x) if x else np.zeros(0) for x in out)


def _lanes(kept: np.ndarray | tuple[np.ndarray, int], rows: np.ndarray | None = None) -> np.ndarray:
    """An execution's addresses (``kept``: them, or (base, offset), ptx_run._memory), all or the warp rows ``rows``."""
    a, off = (kept, 0) if isinstance(kept, np.ndarray) else kept
    a = a if rows is None else a.reshape(-1, WARP)[rows]
    return a + off if off else a


def _row_figures(space: str, width: int) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, ...]]:
    """(addresses, active) -> per row: active lanes, and the figure and ideal (global, shared), and
    the least and greatest lane stride (global)."""
    model = M.row_model(space, width) if space in ("global", "shared") else None

    def figures(a: np.ndarray, act: np.ndarray) -> tuple[np.ndarray, ...]:
        lanes = np.count_nonzero(act, axis=1)
        if model is None:
            return (lanes,)
        return (lanes, *model(a, act), *(_row_strides(a, act) if space == "global" else ()))
    return figures


def _row_strides(a: np.ndarray, act: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the least and greatest address distance between neighbouring lanes that are both
    active (least > greatest: no such pair)."""
    big = np.iinfo(np.int64).max
    d = a[:, 1:] - a[:, :-1]
    pair = act[:, 1:] & act[:, :-1]
    return np.where(pair, d, big).min(axis=1), np.where(pair, d, -big).max(axis=1)


def _key_strides(lo_row: np.ndarray, hi_row: np.ndarray, key: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per key (execution x variant): the least and greatest of its rows' :func:`_row_strides` (least >
    greatest: no row with a pair). ``key``: per row, non-decreasing (each key's rows together)."""
    big = np.iinfo(np.int64).max
    has = lo_row <= hi_row
    lo, hi = np.full(n, big), np.full(n, -big)
    k = key[has]
    if k.size:  # per run of equal keys: its least and greatest
        starts = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
        lo[k[starts]] = np.minimum.reduceat(lo_row[has], starts)
        hi[k[starts]] = np.maximum.reduceat(hi_row[has], starts)
    return lo, hi
