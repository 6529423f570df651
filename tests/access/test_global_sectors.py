"""Global sectors per request (cudalens.access.memory.global_sectors): the one-sort path for aligned
accesses of at most a sector per lane gives the figures of the general path (every sector each lane
touches, deduplicated), on random warps: strided, scattered, misaligned, partly or wholly idle."""

from __future__ import annotations

import numpy as np

from cudalens.access import memory as M


def _general(addr: np.ndarray, active: np.ndarray, width: int, distinct_ideal: bool):
    cols = [addr // M.SECTOR, *((addr + off) // M.SECTOR for off in range(M.SECTOR, width, M.SECTOR)),
            (addr + width - 1) // M.SECTOR]
    sectors = M._distinct_per_row(np.concatenate(cols, axis=1), np.concatenate([active] * len(cols), axis=1))
    packed = -(-(active.sum(axis=1) * width) // M.SECTOR)
    return sectors, np.minimum(packed, sectors) if distinct_ideal else packed


def test_the_one_sort_path_counts_what_the_general_path_counts():
    rng = np.random.default_rng(7)
    lane = np.arange(32)
    fast = 0
    for _ in range(600):
        width = int(rng.choice([1, 2, 4, 8, 16, 32]))
        rows = int(rng.integers(1, 6))
        base = int(rng.integers(0, 1 << 40)) * width
        per_lane = lane * int(rng.integers(0, 70)) * width if rng.random() < 0.5 else rng.integers(0, 4096, 32) * width
        addr = (base + per_lane)[None, :] + np.arange(rows)[:, None] * int(rng.integers(0, 1000)) * width
        if width > 1 and rng.random() < 0.25:
            addr = addr + int(rng.integers(1, width))  # misaligned: the general path
        active = rng.random((rows, 32)) < rng.choice([1.0, 0.7, 0.1, 0.0])
        fast += not np.count_nonzero((addr % width != 0) & active)
        for distinct in (False, True):
            got, want = M.global_sectors(addr, active, width, distinct_ideal=distinct), _general(addr, active, width,
                                                                                                   distinct)
            assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    assert 300 < fast < 600  # both paths were taken
