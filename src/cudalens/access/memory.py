"""Warp-level memory models: global sectors, shared-memory bank conflicts, constant serialization.

All functions take per-warp arrays of shape (warps, 32): an address (bytes, or element index for
constant memory) and an ``active`` mask. They are pure and vectorized.

Global memory (CC >= 6.0, BPG 9.2.1): a warp request is served in 32-byte sectors; the cost is the
number of *distinct* sectors the active lanes touch. The ideal for an access of ``w`` bytes per lane
is ``ceil(active_lanes * w / 32)``.

Shared memory (32 banks of 4 bytes): one *wavefront* serves at most one distinct 4-byte word per bank;
lanes reading the same word share it (broadcast). 4- and 8-byte accesses are served for the whole
warp at once, 16-byte accesses in two passes of 16 lanes; each pass needs ``max over banks of
distinct words`` wavefronts. This is the rule measured on an H100 with one load per pattern
(benchmarks/model/shared_wide_probe.py, results/h100/shared_wide_probe.json: 11 of 11 patterns, e.g. a
16-byte broadcast costs 2 wavefronts, an 8-byte broadcast 1, 16-byte loads of 4 distinct addresses
2, unit-stride 16-byte loads 4). For 8- and 16-byte accesses lanes share one read of an address only
within a group of 4 consecutive lanes (:data:`LANE_GROUP`): a pass needs at least the bytes its
groups receive over 128 wavefronts. The H100's per-instruction counters on public code show it
(results/h100/realworld/): 16-byte loads of ``tile[lane % 4]`` cost 4 wavefronts, not 2, and 8-byte
stores of ``s[lane % 8]`` 2, not 1; every probe pattern keeps its figure. We report, per warp request,

- ``wavefronts``: the sum over passes, which is what Nsight Compute's
  ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`` divided by
  ``smsp__sass_inst_executed_op_shared_{ld,st}.sum`` measures;
- ``ideal``: the wavefronts the same data needs without conflicts (per pass, the distinct bytes over
  128, at least 1, never more than the actual count);
- ``ways``: the conflict degree, the worst pass's wavefronts over its ideal (1 = conflict-free,
  n = n-way conflict).

Constant memory: a warp's request is serialized into one access per distinct address (K1).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

SECTOR = 32
BANKS = 32
_SENTINEL = np.iinfo(np.int64).min


_BYTES_SUMMED = np.uint64(0x0101010101010101)  # (a word times this: its top byte the sum of its bytes)


#: rows from which counting a row's lanes by its words is quicker (fewer: numpy's own reductions, one call)
_WORDS_FROM = 256


def _row_words(active: np.ndarray) -> np.ndarray | None:
    """A (rows, 32) bool array's rows as four 8-byte words each (a view), None for another shape or layout,
    or fewer rows than :data:`_WORDS_FROM`."""
    if active.ndim != 2 or active.shape[1] != 32 or active.dtype != np.bool_ or not active.flags.c_contiguous \
            or len(active) < _WORDS_FROM:
        return None
    return active.view(np.uint64)


def lanes_on(active: np.ndarray) -> np.ndarray:
    """``np.count_nonzero(active, axis=1)`` of a (rows, 32) bool array (int64), for a fraction of its cost: each
    row's four words added (each byte then sums four lanes: no carry), the bytes of the sum added by one product."""
    w = _row_words(active)
    if w is None:
        return np.count_nonzero(active, axis=1)
    s = w[:, 0] + w[:, 1]
    s += w[:, 2]
    s += w[:, 3]
    s *= _BYTES_SUMMED
    s >>= np.uint64(56)
    return s.astype(np.int64)


def rows_on(active: np.ndarray) -> np.ndarray:
    """``active.any(axis=1)`` of a (rows, 32) bool array, for a fraction of its cost (its four words or'ed)."""
    w = _row_words(active)
    if w is None:
        return np.logical_or.reduce(active, axis=1)
    s = w[:, 0] | w[:, 1]
    s |= w[:, 2]
    s |= w[:, 3]
    return s != 0


def _distinct_sorted(v: np.ndarray) -> np.ndarray:
    """Number of distinct values per row of rows sorted ascending, :data:`_SENTINEL` not counted."""
    new = np.ones_like(v, dtype=bool)
    new[:, 1:] = v[:, 1:] != v[:, :-1]
    new &= v != _SENTINEL
    return new.sum(axis=1)


def _distinct_per_row(values: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Number of distinct values per row among active entries."""
    return _distinct_sorted(np.sort(np.where(active, values, _SENTINEL), axis=1))


def global_sectors(addr: np.ndarray, active: np.ndarray, width: int,
                   distinct_ideal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(sectors, ideal) per warp for byte addresses ``addr`` of ``width``-byte accesses.

    ``ideal``: the sectors the active lanes' bytes would fill if packed; with ``distinct_ideal``
    no more than the sectors the access touches, as Nsight Compute's "L2 Theoretical Sectors Global
    Ideal" counts (a warp-wide broadcast of one float: 1 sector, not 4; two rows' floats, each read by
    16 lanes: 2). That rule gives the H100's ideal on 8227 of 8251 full-warp global instructions of
    public programs (the other 24: warps partly idle in some executions)."""
    if width <= SECTOR and not np.count_nonzero((addr % width != 0) & active):
        # aligned, at most a sector per lane: one sort gives both (sorting addresses sorts their sectors)
        v = np.sort(np.where(active, addr, _SENTINEL), axis=1)
        sectors = _distinct_sorted(np.where(v != _SENTINEL, v // SECTOR, _SENTINEL))
    else:
        cols = [addr // SECTOR]
        for off in range(SECTOR, width, SECTOR):
            cols.append((addr + off) // SECTOR)
        cols.append((addr + width - 1) // SECTOR)
        touched = np.concatenate(cols, axis=1)
        mask = np.concatenate([active] * len(cols), axis=1)
        sectors = _distinct_per_row(touched, mask)
    packed = -(-(lanes_on(active) * width) // SECTOR)
    return sectors, np.minimum(packed, sectors) if distinct_ideal else packed


#: lanes that share one read of a wide (8- or 16-byte) shared access: identical addresses are served
#: once per group of this many consecutive lanes (see :func:`shared_wavefronts`)
LANE_GROUP = 4


def _lane_group_wavefronts(a: np.ndarray, m: np.ndarray, width: int) -> np.ndarray:
    """Per warp: wavefronts the data delivered to the lanes needs when identical addresses are
    shared only within groups of :data:`LANE_GROUP` consecutive lanes (128 bytes per wavefront)."""
    if width < 8:
        return np.zeros(a.shape[0], dtype=np.int64)
    g = a.reshape(a.shape[0], -1, LANE_GROUP)
    gm = m.reshape(g.shape)
    v = np.sort(np.where(gm, g // width, _SENTINEL), axis=2)
    new = np.ones_like(v, dtype=bool)
    new[:, :, 1:] = v[:, :, 1:] != v[:, :, :-1]
    new &= v != _SENTINEL
    return -(-(new.sum(axis=(1, 2)) * width) // 128)


def shared_wavefronts(addr: np.ndarray, active: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ways, wavefronts, ideal_wavefronts) per warp for shared-memory byte addresses."""
    return _shared(addr, active, width, True)  # type: ignore[return-value]


def _shared(addr: np.ndarray, active: np.ndarray, width: int, ways_too: bool) -> tuple[np.ndarray | None, ...]:
    """:func:`shared_wavefronts`; ways None unless ``ways_too``."""
    words_per_lane = max(1, width // 4)
    passes = 2 if width >= 16 else 1
    lanes = 32 // passes
    nwarps = addr.shape[0]
    ways = np.zeros(nwarps, dtype=np.float64) if ways_too else None
    waves = np.zeros(nwarps, dtype=np.int64)
    ideal = np.zeros(nwarps, dtype=np.int64)
    for p in range(passes):
        a = addr[:, p * lanes:(p + 1) * lanes] if passes > 1 else addr
        m = active[:, p * lanes:(p + 1) * lanes] if passes > 1 else active
        if words_per_lane == 1:
            w = np.where(m, a // 4, _SENTINEL)
        else:
            words = np.concatenate([a // 4 + k for k in range(words_per_lane)], axis=1)
            w = np.where(np.concatenate([m] * words_per_lane, axis=1), words, _SENTINEL)
        w.sort(axis=1)
        first = np.ones_like(w, dtype=bool)
        first[:, 1:] = w[:, 1:] != w[:, :-1]
        first &= w != _SENTINEL
        rows = np.nonzero(first)[0]
        banks = np.mod(w[first], BANKS)
        counts = np.bincount(rows * BANKS + banks, minlength=nwarps * BANKS).reshape(nwarps, BANKS)
        pass_waves = counts.max(axis=1)
        if width >= 8:  # (narrower: no lane group needs more)
            pass_waves = np.maximum(pass_waves, _lane_group_wavefronts(a, m, width))
        distinct_words = first.sum(axis=1)
        pass_ideal = np.minimum(np.maximum(-(-distinct_words // BANKS), 1), pass_waves)
        pass_ideal = np.where(m.any(axis=1), pass_ideal, 0)
        waves += pass_waves
        ideal += pass_ideal
        if ways is not None:
            ways = np.maximum(ways, np.where(pass_ideal > 0, pass_waves / np.maximum(pass_ideal, 1), 0.0))
    return ways, waves, ideal


def distinct_addresses(index: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Distinct element indices per warp (constant-memory serialization)."""
    return _distinct_per_row(index, active)


def lane_stride(index: np.ndarray, active: np.ndarray) -> int | None:
    """The constant element distance between consecutive active lanes, or None if not constant."""
    if index.ndim == 2 and index.dtype.kind in "iu" and index.shape == active.shape:
        vals = index[active]  # every row's active lanes in order, row after row
        rows = np.nonzero(active)[0]
        d = np.unique((vals[1:] - vals[:-1])[rows[1:] == rows[:-1]])  # neighbours within a row
        return d.tolist()[0] if len(d) == 1 else None
    strides = set()  # floating indices (NaN, -0.0 as a set keeps them) or another shape: row by row
    for row, m in zip(index, active):
        v = row[m]
        if len(v) > 1:
            strides.update(np.unique(np.diff(v)).tolist())
            if len(strides) > 1:
                return None
    return strides.pop() if len(strides) == 1 else None


def block_shifts(addr: np.ndarray, active: np.ndarray, executions: int, variants: int, blocks: int) -> np.ndarray:
    """Per execution and variant (``addr``/``active``: the executions one after another, each one's
    lanes variant-major, then blocks, each block's lanes alike): the gcd of 32 and the address
    distances (mod 32 bytes) between each lane of the second block and the same lane of the first
    where both are active; 32 when whole sectors apart (or never both active). Execution-major."""
    lanes = addr.reshape(executions, variants, blocks, -1)
    on = active.reshape(lanes.shape)
    both = on[:, :, 0] & on[:, :, 1]
    # gcd(32, x mod 32) is the lowest set bit of x | 32 (x mod 32: x's low 5 bits, negative x too), and the gcd of
    # several the least of those bits: the lowest set bit of all of them or'ed together, with 32
    d = np.bitwise_or.reduce(lanes[:, :, 1] - lanes[:, :, 0], axis=2, where=both, initial=0) | 32
    return (d & -d).ravel()


def row_model(space: str, width: int) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, ...]]:
    """(addresses, active) -> (figure, ideal) per warp, row by row: sectors of a global access (the ideal
    with lanes reading one address counted once), wavefronts of a shared one. :func:`distinct_rows`
    runs it once per class of rows alike."""
    if space == "global":
        return lambda a, act: global_sectors(a, act, width, distinct_ideal=True)
    return lambda a, act: _shared(a, act, width, False)[1:]  # type: ignore[return-value]


#: fewer rows than this are modelled directly (grouping them would cost more than it saves)
_DEDUP_ROWS = 32
_MIX = np.random.default_rng(27).integers(1, 1 << 62, size=64, dtype=np.int64) | 1  # row hash (checked)

#: bytes by which moving a warp's addresses changes no warp model's figure (the same banks: 32 of 4
#: bytes; the same sectors, and their alignment, for any access width dividing it)
ROW_PERIOD = 128


def distinct_rows(model: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, ...]], addr: np.ndarray,
                  active: np.ndarray, width: int) -> tuple[np.ndarray, ...]:
    """``model(addr, active)`` for a row-wise warp model, computed once per distinct row: rows whose
    active lanes' addresses differ by one multiple of :data:`ROW_PERIOD` bytes (``width`` dividing it:
    the same sectors or banks in the same pattern), with the same lanes active, share figures."""
    if len(addr) < _DEDUP_ROWS or ROW_PERIOD % max(width, 1):
        return model(addr, active)
    on = addr[np.arange(len(addr)), active.argmax(axis=1)]  # the first active lane's address (none: masked)
    # active lanes: their address less the first's rounded down to a multiple of ROW_PERIOD; the others _SENTINEL
    # (np.where's values, in arithmetic that wraps back to them: three passes cheaper than its select)
    norm = addr - ((on & -ROW_PERIOD) + _SENTINEL)[:, None]  # (-ROW_PERIOD: its multiples' mask)
    np.multiply(norm, active, out=norm)
    norm += _SENTINEL
    h = norm @ _MIX[:norm.shape[1]]  # (wraps)
    order = h.argsort()
    new = np.empty(len(h), dtype=bool)  # per row in hash order: a hash not seen before it
    new[0] = True
    np.not_equal(h[order[1:]], h[order[:-1]], out=new[1:])
    first = order[new]  # a row of each hash (which one does not matter: the model works row by row)
    inv = np.empty(len(h), dtype=np.intp)
    inv[order] = np.cumsum(new) - 1
    if len(first) == len(addr) or not (norm == norm[first].take(inv, axis=0)).all():  # (no two alike, or a hash
        # collision; take: the rows gathered at a fraction of fancy indexing's cost)
        return model(addr, active)
    return tuple(x[inv] for x in model(addr[first], active[first]))

