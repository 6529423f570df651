"""Warp-level memory models: global sectors, shared-memory bank conflicts, constant serialization.

All functions take per-warp arrays of shape (warps, 32): an address (bytes, or element index for
constant memory) and an ``active`` mask. They are pure and vectorized.

Global memory (CC >= 6.0, BPG 9.2.1): a warp request is served in 32-byte sectors; the cost is the
number of *distinct* sectors the active lanes touch. The ideal for an access of ``w`` bytes per lane
is ``ceil(active_lanes * w / 32)``.

Shared memory (32 banks of 4 bytes): one *wavefront* serves at most one distinct 4-byte word per bank;
lanes reading the same word share it (broadcast). Accesses wider than 4 bytes are split by the
hardware into phases: 8-byte accesses into two half-warps, 16-byte into four quarter-warps; each
phase needs ``max over banks of distinct words`` wavefronts. We report, per warp request,

- ``ways``: the worst phase's wavefront count (1 = conflict-free, n = n-way conflict), and
- ``wavefronts``: the sum over phases, which is what Nsight Compute's
  ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`` divided by
  ``smsp__sass_inst_executed_op_shared_{ld,st}.sum`` measures (ideal: 1, 2, 4 for 4, 8, 16 bytes).

Constant memory: a warp's request is serialized into one access per distinct address (K1).
"""

from __future__ import annotations

import numpy as np

SECTOR = 32
BANKS = 32
_SENTINEL = np.iinfo(np.int64).min


def _distinct_per_row(values: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Number of distinct values per row among active entries."""
    v = np.where(active, values, _SENTINEL)
    v = np.sort(v, axis=1)
    new = np.ones_like(v, dtype=bool)
    new[:, 1:] = v[:, 1:] != v[:, :-1]
    new &= v != _SENTINEL
    return new.sum(axis=1)


def global_sectors(addr: np.ndarray, active: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(sectors, ideal) per warp for byte addresses ``addr`` of ``width``-byte accesses."""
    cols = [addr // SECTOR]
    for off in range(SECTOR, width, SECTOR):
        cols.append((addr + off) // SECTOR)
    cols.append((addr + width - 1) // SECTOR)
    touched = np.concatenate(cols, axis=1)
    mask = np.concatenate([active] * len(cols), axis=1)
    sectors = _distinct_per_row(touched, mask)
    ideal = -(-(active.sum(axis=1) * width) // SECTOR)
    return sectors, ideal


def shared_wavefronts(addr: np.ndarray, active: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ways, wavefronts, ideal_wavefronts) per warp for shared-memory byte addresses."""
    words_per_lane = max(1, width // 4)
    phases = 1 if width <= 4 else (2 if width == 8 else 4)
    lanes = 32 // phases
    nwarps = addr.shape[0]
    ways = np.zeros(nwarps, dtype=np.int64)
    waves = np.zeros(nwarps, dtype=np.int64)
    ideal = np.zeros(nwarps, dtype=np.int64)
    for p in range(phases):
        a = addr[:, p * lanes:(p + 1) * lanes]
        m = active[:, p * lanes:(p + 1) * lanes]
        words = np.concatenate([a // 4 + k for k in range(words_per_lane)], axis=1)
        mm = np.concatenate([m] * words_per_lane, axis=1)
        w = np.where(mm, words, _SENTINEL)
        w = np.sort(w, axis=1)
        first = np.ones_like(w, dtype=bool)
        first[:, 1:] = w[:, 1:] != w[:, :-1]
        first &= w != _SENTINEL
        rows = np.nonzero(first)[0]
        banks = np.mod(w[first], BANKS)
        counts = np.bincount(rows * BANKS + banks, minlength=nwarps * BANKS).reshape(nwarps, BANKS)
        phase_ways = counts.max(axis=1)
        ways = np.maximum(ways, phase_ways)
        waves += phase_ways
        ideal += (m.any(axis=1)).astype(np.int64)
    return ways, waves, ideal


def distinct_addresses(index: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Distinct element indices per warp (constant-memory serialization)."""
    return _distinct_per_row(index, active)


def lane_stride(index: np.ndarray, active: np.ndarray) -> int | None:
    """The constant element distance between consecutive active lanes, or None if not constant."""
    strides = set()
    for row, m in zip(index, active):
        v = row[m]
        if len(v) > 1:
            strides.update(np.unique(np.diff(v)).tolist())
            if len(strides) > 1:
                return None
    return strides.pop() if len(strides) == 1 else None
