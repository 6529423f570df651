"""The counts a run keeps per memory record, worked out once at the end of the run for all its
executions together (cudalens.access.ptx_run defers them): requests, lanes, lane strides, the
block-to-block address shift (global), and sectors or wavefronts with their ideal, one model call
per (space, width)."""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import chain
from typing import Any

import numpy as np

from cudalens.access import memory as M
from cudalens.access.ptx_exec import WARP, Machine

_BIG = np.iinfo(np.int64).max


def count_deferred(m: Machine) -> None:
    """Requests, lanes and sectors (global) or wavefronts (shared) of every recorded execution: one model call
    per (space, width) for the whole run (the models work row by row: the same figures as one call per
    execution); per record the sums, and each execution's figure (``per_call``, first variant: the base trial)."""
    nrec = len(m.records)
    for (space, width), calls in m.deferred.items():
        count, lanes, lo, hi, shifts, num, ideal = _per_execution(m, space, width, calls)
        # the (execution, variant) pairs that hold a record, in execution order, and their records (positions in
        # m.records: counted per position, the positions held taken in order)
        variants = [c[3] for c in calls]  # (lists shared by the executions of one record set: chained in C)
        flat = np.fromiter(chain.from_iterable(variants), dtype=np.int64)
        flat += np.repeat(np.arange(0, len(calls) * m.V, m.V), [len(vs) for vs in variants])
        rid = np.fromiter(chain.from_iterable(c[4] for c in calls), dtype=np.int64)
        held = np.bincount(rid, minlength=nrec) > 0
        uniq = np.flatnonzero(held).tolist()
        n = count[flat]
        req_r = np.bincount(rid, weights=n, minlength=nrec)
        lanes_r = np.bincount(rid, weights=lanes[flat], minlength=nrec)
        lo_r = hi_r = None
        if space == "global":
            lo, hi = lo[flat], hi[flat]
            ok = lo <= hi  # some neighbouring lanes both active
            if ok.any():
                lo_r, hi_r = np.full(nrec, _BIG), np.full(nrec, -_BIG)
                np.minimum.at(lo_r, rid[ok], lo[ok])
                np.maximum.at(hi_r, rid[ok], hi[ok])
        shift_r = None
        if space == "global" and len(m.launch.blocks) > 1:  # per record: the gcd of its executions' block shifts
            shift_r = np.zeros(nrec, dtype=np.int64)
            np.gcd.at(shift_r, rid, shifts[flat])
        num_r = ideal_r = None
        if space in ("global", "shared"):
            total = num[flat]
            num_r = np.bincount(rid, weights=total, minlength=nrec)
            ideal_r = np.bincount(rid, weights=ideal[flat], minlength=nrec)
            first = flat % m.V == 0
            for r, t, k in zip(rid[first].tolist(), total[first].tolist(), n[first].tolist()):
                m.records[r].per_call.append(round(t / k, 4))
        # per record held, in position order (None: a sum the space or the run has not)
        req_h, lanes_h = req_r[held].tolist(), lanes_r[held].tolist()
        lo_h, hi_h, shift_h, num_h, ideal_h = [x[held].tolist() if x is not None else None
                                               for x in (lo_r, hi_r, shift_r, num_r, ideal_r)]
        for j, r in enumerate(uniq):
            rec = m.records[r]
            rec.requests += int(req_h[j])
            rec.lanes += int(lanes_h[j])
            if lo_h is not None and hi_h is not None and lo_h[j] <= hi_h[j]:
                lo1, hi1 = lo_h[j], hi_h[j]
                rec.stride_lo = lo1 if rec.stride_lo is None else min(rec.stride_lo, lo1)
                rec.stride_hi = hi1 if rec.stride_hi is None else max(rec.stride_hi, hi1)
            if shift_h is not None:
                rec.block_shift = math.gcd(rec.block_shift, int(shift_h[j]))
            if num_h is not None and ideal_h is not None:
                if space == "global":
                    rec.sectors += num_h[j]
                    rec.ideal += ideal_h[j]
                else:
                    rec.wavefronts += num_h[j]
                    rec.ideal_wavefronts += ideal_h[j]
    m.deferred.clear()


#: lanes of deferred executions worked on at a time (temporaries that stay small)
_CHUNK_LANES = 1 << 18


def _per_execution(m: Machine, space: str, width: int, calls: list) -> tuple[Any, ...]:
    """Per (execution, variant), execution-major: warps present, active lanes, least and greatest
    lane stride (global), block-to-block shift (global, two blocks or more), and the figure and
    ideal summed over the warps (global, shared); the executions a chunk at a time, of each only
    the rows present. The figures of a row, its active lanes and lane strides, are worked out once
    per class of rows alike (:func:`cudalens.access.memory.distinct_rows`: the same lanes active at
    addresses moved by a multiple of 128 bytes; those of trials that do not change the access among them), and
    those of an execution once per class of executions alike (:func:`_alike`)."""
    reps, of = _alike(calls, width)
    if len(reps) < len(calls):  # each execution's figures those of the first alike
        got = _per_execution(m, space, width, [calls[j] for j in reps])
        at = (np.asarray(of, dtype=np.int64)[:, None] * m.V + np.arange(m.V)).ravel()
        return tuple(x.take(at) if x is not None else None for x in got)
    step = max(1, _CHUNK_LANES // (len(m.row_variant) * WARP))
    if len(calls) <= step:  # (one chunk: the common case, no concatenation of the chunks' figures)
        return _chunk(m, space, width, calls)
    out = [_chunk(m, space, width, calls[j:j + step]) for j in range(0, len(calls), step)]
    return tuple(np.concatenate(x) if x[0] is not None else None for x in zip(*out))


def _alike(calls: list, width: int) -> tuple[list[int], list[int]]:
    """The executions with figures of their own, and per execution the position among those of the one
    whose figures are its. Executions are alike where they hold the same lanes (the same objects: a
    register's lanes, with offsets added to them; the active and present lanes) at offsets that differ
    by a multiple of 128 bytes (``width`` dividing it: every figure the same, memory.distinct_rows; else
    the same offset): their rows are alike one by one, their block shifts and lane strides the same."""
    period = M.ROW_PERIOD if M.ROW_PERIOD % max(width, 1) == 0 else 0
    first: dict[tuple[int, int, int, int], int] = {}
    reps: list[int] = []
    of: list[int] = []
    for j, (kept, active, present, _vs, _ids) in enumerate(calls):
        base, off = (kept, 0) if isinstance(kept, np.ndarray) else kept
        key = (id(base), off % period if period else off, id(active), id(present))
        k = first.get(key)
        if k is None:
            k = first[key] = len(reps)
            reps.append(j)
        of.append(k)
    return reps, of


def _chunk(m: Machine, space: str, width: int, part: list) -> tuple[Any, ...]:
    """:func:`_per_execution` of a chunk of executions (None for a figure the space has not)."""
    nb = len(m.launch.blocks)
    e = len(part)
    nk = e * m.V
    present = np.concatenate([c[2] for c in part])
    rows = np.flatnonzero(present)  # (take on their positions: the rows of fancy indexing, at a fraction of its cost)
    act_all = np.concatenate([c[1] for c in part]).reshape(-1, WARP)
    act = act_all.take(rows, axis=0)
    bases, offsets = _bases(part)
    if space == "global" and nb > 1:  # (block_shifts works on every row: lanes aligned across blocks)
        if offsets is not None:  # (bases: a new array, a concatenation)
            bases.reshape(e, -1)[...] += offsets[:, None]
        a_all = bases.reshape(-1, WARP)
        a, shifts = a_all.take(rows, axis=0), M.block_shifts(a_all, act_all, e, m.V, nb)
    else:  # of each execution only the rows present, its offset added to them alone
        a, shifts = bases.reshape(-1, WARP).take(rows, axis=0), None
        if offsets is not None:
            a += np.repeat(offsets, len(m.row_variant)).take(rows)[:, None]
    key = (np.arange(0, nk, m.V)[:, None] + m.row_variant).ravel().take(rows)  # (non-decreasing)
    row_figures = _row_figures(space, width)
    got = M.distinct_rows(row_figures, a, act, width) if space in ("global", "shared") else row_figures(a, act)
    count = np.bincount(key, minlength=nk)
    lanes = np.bincount(key, weights=got[0], minlength=nk)
    lo = hi = num = ideal = None
    if space == "global":
        lo, hi = _key_strides(got[3], got[4], key, nk)
    if space in ("global", "shared"):
        num = np.bincount(key, weights=got[1], minlength=nk)
        ideal = np.bincount(key, weights=got[2], minlength=nk)
    return count, lanes, lo, hi, shifts, num, ideal


def _bases(part: list) -> tuple[np.ndarray, np.ndarray | None]:
    """The executions' addresses (``kept``: them, or (base, offset) whose sum they are, ptx_memory.memory_step)
    one after another: their bases, and per execution its offset (None: none has one)."""
    kept = [c[0] for c in part]
    if all(isinstance(k, np.ndarray) for k in kept):
        return np.concatenate(kept), None
    bases = np.concatenate([k if isinstance(k, np.ndarray) else k[0] for k in kept])
    return bases, np.array([0 if isinstance(k, np.ndarray) else k[1] for k in kept], dtype=np.int64)


def _row_figures(space: str, width: int) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, ...]]:
    """(addresses, active) -> per row: active lanes, and the figure and ideal (global, shared), and
    the least and greatest lane stride (global)."""
    model = M.row_model(space, width) if space in ("global", "shared") else None

    def figures(a: np.ndarray, act: np.ndarray) -> tuple[np.ndarray, ...]:
        lanes = M.lanes_on(act)
        if model is None:
            return (lanes,)
        return (lanes, *model(a, act), *(_row_strides(a, act) if space == "global" else ()))
    return figures


def _row_strides(a: np.ndarray, act: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the least and greatest address distance between neighbouring lanes that are both
    active (least > greatest: no such pair)."""
    d = a[:, 1:] - a[:, :-1]
    pair = act[:, 1:] & act[:, :-1]
    return np.where(pair, d, _BIG).min(axis=1), np.where(pair, d, -_BIG).max(axis=1)


def _key_strides(lo_row: np.ndarray, hi_row: np.ndarray, key: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per key (execution x variant): the least and greatest of its rows' :func:`_row_strides` (least >
    greatest: no row with a pair). ``key``: per row, non-decreasing (each key's rows together)."""
    has = lo_row <= hi_row
    lo, hi = np.full(n, _BIG), np.full(n, -_BIG)
    k = key[has]
    if k.size:  # per run of equal keys: its least and greatest
        starts = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
        lo[k[starts]] = np.minimum.reduceat(lo_row[has], starts)
        hi[k[starts]] = np.maximum.reduceat(hi_row[has], starts)
    return lo, hi
