"""Occupancy over whole grids of launch configurations at once (numpy).

:func:`blocks_grid` evaluates the same limits as :func:`cudalens.occupancy.calculator.evaluate`
on broadcast arrays of block sizes, register counts and dynamic shared-memory sizes, so a complete
sweep of one compute capability (every block size 32..1024 in steps of 32 x every register count
1..255 x dynamic shared memory 0..227 KiB in 1 KiB steps, 1,860,480 points on CC 9.0) took
0.13-0.25 s on a 2-core CI machine (0.07 s for CC 8.6, 0.02 s for CC 7.5). Partitioned global caching is not modelled here (it is off by default everywhere).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from cudalens.errors import InputError
from cudalens.occupancy.calculator import (
    LIMIT_NAMES,
    as_count,
    make_settings,
    preferred_smem_per_sm,
    smem_limit_per_block,
)
from cudalens.occupancy.device import OccDevice, device_for

#: Stands for "no limit" (a resource that is not used) inside the arrays.
NO_LIMIT = 2**31 - 1


def _round_up(x: np.ndarray, unit: int) -> np.ndarray:
    return -(-x // unit) * unit


def _register_blocks(dev: OccDevice, warps, regs, sub_partitions: int) -> np.ndarray:
    per_warp = _round_up(regs * dev.warp_size, dev.reg_alloc_unit)
    too_many = (
        (regs > dev.max_regs_per_thread)
        | (per_warp * warps > dev.regs_per_block)
        | (per_warp * _round_up(warps, sub_partitions) > dev.regs_per_block)
    )
    warps_per_sub = (dev.regs_per_sm // sub_partitions) // np.maximum(per_warp, 1)
    fit = (warps_per_sub * sub_partitions) // warps
    return np.where(too_many, 0, np.where(per_warp == 0, NO_LIMIT, fit))


def blocks_grid(
    cc: "str | OccDevice",
    threads_per_block,
    registers_per_thread,
    shared_mem_per_block=0,
    *,
    static_shared_mem: int = 0,
    max_dynamic_shared_mem: int | None = None,
    carveout: int | None = None,
    cache_config: str | None = None,
    block_barriers: int = 1,
) -> dict[str, np.ndarray]:
    """Per-limit and resident block counts for every combination of the broadcast inputs.

    Returns arrays keyed "warps", "registers", "shared_memory", "blocks", "barriers" (NO_LIMIT where
    a resource sets no limit) and "active" (resident blocks per SM), all of the broadcast shape.
    """
    dev = device_for(cc)
    t = np.asarray(threads_per_block, dtype=np.int64)
    r = np.asarray(registers_per_thread, dtype=np.int64)
    s = np.asarray(shared_mem_per_block, dtype=np.int64)
    for name, arr, low in (("threads per block", t, 1), ("registers per thread", r, 0),
                           ("dynamic shared memory (bytes)", s, 0)):
        if arr.size and int(arr.min()) < low:
            raise InputError(f"{name} must be at least {low}, got {int(arr.min())}")
    t, r, s = np.broadcast_arrays(t, r, s)
    k = make_settings(
        dev, 1, 0, 0,
        static_shared_mem=static_shared_mem,
        max_dynamic_shared_mem=max_dynamic_shared_mem,
        carveout=carveout,
        cache_config=cache_config,
        block_barriers=block_barriers,
    )
    warps = -(-t // dev.warp_size)

    warp_blocks = np.where(t > dev.max_threads_per_block, 0, dev.max_warps_per_sm // warps)

    reg_blocks = _register_blocks(dev, warps, r, dev.sub_partitions)
    if dev.major == 6 and dev.minor == 0:  # must also fit the 4-sub-partition Pascal chips
        other = _register_blocks(dev, warps, r, 4)
        reg_blocks = np.where((reg_blocks != 0) & (other == 0), 0, reg_blocks)

    base = k.static_smem + dev.reserved_smem_per_block
    alloc = _round_up(base + s, dev.smem_alloc_granularity)
    per_block_limit = smem_limit_per_block(dev, base + k.max_dynamic_smem)
    preference = preferred_smem_per_sm(dev, k.carveout, k.cache_config)
    fits = (s <= k.max_dynamic_smem) & (alloc <= per_block_limit)
    if dev.major >= 7:
        configs = np.asarray(dev.smem_configs, dtype=np.int64)
        idx = np.searchsorted(configs, alloc, side="left")
        if np.any(fits & (alloc > preference) & (idx >= len(configs))):
            raise InputError(f"a block needs more shared memory than CC {dev.cc} can configure")
        raised = configs[np.minimum(idx, len(configs) - 1)]
    else:
        raised = np.full_like(alloc, dev.smem_per_sm)
    per_sm = np.where(preference >= alloc, preference, raised)
    smem_blocks = np.where(
        fits, np.where(alloc > 0, per_sm // np.maximum(alloc, 1), NO_LIMIT), 0
    )

    block_blocks = np.full(t.shape, dev.max_blocks_per_sm, dtype=np.int64)
    if dev.major >= 9 and k.block_barriers > 0 and dev.barrier_slots_per_sm is not None:
        bar_blocks = np.full(t.shape, dev.barrier_slots_per_sm // k.block_barriers, dtype=np.int64)
    else:
        bar_blocks = np.full(t.shape, NO_LIMIT, dtype=np.int64)

    out = {
        "warps": warp_blocks.astype(np.int64),
        "registers": reg_blocks.astype(np.int64),
        "shared_memory": smem_blocks.astype(np.int64),
        "blocks": block_blocks,
        "barriers": bar_blocks,
    }
    active = out["warps"]
    for name in LIMIT_NAMES[1:]:
        active = np.minimum(active, out[name])
    out["active"] = active
    return out


def occupancy_grid(cc: "str | OccDevice", threads_per_block, *args, **kwargs) -> np.ndarray:
    """Occupancy (0..1) for every combination, same arguments as :func:`blocks_grid`."""
    dev = device_for(cc)
    grid = blocks_grid(dev, threads_per_block, *args, **kwargs)
    warps = -(-np.asarray(threads_per_block, dtype=np.int64) // dev.warp_size)
    return grid["active"] * warps / dev.max_warps_per_sm


@dataclass(frozen=True)
class FullSweep:
    """Resident blocks per SM over every block size x register count x shared-memory size."""

    cc: str
    threads_per_block: np.ndarray  # shape (T,)
    registers_per_thread: np.ndarray  # shape (R,)
    shared_mem_per_block: np.ndarray  # dynamic bytes, shape (S,)
    active_blocks: np.ndarray  # shape (T, R, S)
    max_warps_per_sm: int
    elapsed_s: float  # wall-clock seconds the evaluation took
    warp_size: int = 32

    @property
    def points(self) -> int:
        return int(self.active_blocks.size)

    @property
    def occupancy(self) -> np.ndarray:
        warps = -(-self.threads_per_block // self.warp_size)
        return self.active_blocks * warps[:, None, None] / self.max_warps_per_sm


def full_sweep(
    cc: "str | OccDevice",
    *,
    smem_step: int = 1024,
    static_shared_mem: int = 0,
    carveout: int | None = None,
    cache_config: str | None = None,
    block_barriers: int = 1,
) -> FullSweep:
    """Every block size (32..max, step 32) x every register count (1..255) x dynamic shared memory
    from 0 to the opt-in per-block maximum in steps of ``smem_step`` bytes, for one CC."""
    dev = device_for(cc)
    step = as_count("shared-memory step (bytes)", smem_step, minimum=1)
    start = time.perf_counter()
    threads = np.arange(dev.warp_size, dev.max_threads_per_block + 1, dev.warp_size, dtype=np.int64)
    regs = np.arange(1, 256, dtype=np.int64)
    smem = np.arange(0, max(dev.smem_per_block_optin - static_shared_mem, 0) + 1, step,
                     dtype=np.int64)
    grid = blocks_grid(
        dev,
        threads[:, None, None],
        regs[None, :, None],
        smem[None, None, :],
        static_shared_mem=static_shared_mem,
        carveout=carveout,
        cache_config=cache_config,
        block_barriers=block_barriers,
    )
    active = grid["active"].astype(np.int32)
    elapsed = time.perf_counter() - start
    return FullSweep(dev.cc, threads, regs, smem, active, dev.max_warps_per_sm, elapsed,
                     dev.warp_size)
