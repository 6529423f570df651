"""The block size that maximizes occupancy: cudaOccupancyMaxPotentialBlockSize, ported.

The search tries block sizes from the limit downward in steps of the warp size (the first try is the
limit itself when it is not a multiple of 32) and keeps a size only when it gives *strictly* more
resident threads per SM than every larger size tried, so ties go to the largest block size. It
stops early once a size fills the SM. The suggested grid is blocks per SM x the SM count: the
smallest grid that fills the whole GPU.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, NamedTuple, Union

from cudalens.errors import InputError
from cudalens.occupancy.calculator import as_count, evaluate, make_settings
from cudalens.occupancy.device import OccDevice, device_for

SmemSpec = Union[int, Callable[[int], int]]


class PotentialBlockSize(NamedTuple):
    """What cudaOccupancyMaxPotentialBlockSize returns."""

    min_grid_size: int  # blocks per SM x SM count (x 1 when the SM count is unknown)
    block_size: int  # threads per block; 0 when no block size can run


def max_potential_block_size(
    cc: "str | float | tuple[int, int] | OccDevice",
    registers_per_thread: int,
    shared_mem: SmemSpec = 0,
    block_size_limit: int = 0,
    *,
    static_shared_mem: int = 0,
    max_dynamic_shared_mem: int | None = None,
    kernel_max_threads: int | None = None,
    carveout: int | None = None,
    cache_config: str | None = None,
    block_barriers: int = 1,
    partitioned_gc: str = "off",
    num_sms: int | None = None,
) -> PotentialBlockSize:
    """(min_grid_size, block_size) with cudaOccupancyMaxPotentialBlockSize semantics.

    ``shared_mem``: dynamic shared memory in bytes, either a constant or a function of the block
    size (the VariableSMem form). ``block_size_limit``: the largest block the kernel works with,
    0 for no limit; ``kernel_max_threads``: the kernel's own maximum (``__launch_bounds__``), the
    device maximum by default. ``num_sms``: SMs on the GPU; defaults to a live device's count, and to
    1 for a table-only device (then min_grid_size is the blocks per SM). Other keywords as in
    :func:`cudalens.occupancy.calculate`.
    """
    dev = device_for(cc)
    limit = as_count("block size limit", block_size_limit)
    sms = as_count("SM count", num_sms, minimum=1) if num_sms is not None else (dev.num_sms or 1)
    kernel_max = (
        dev.max_threads_per_block
        if kernel_max_threads is None
        else as_count("kernel maximum threads per block", kernel_max_threads, minimum=1)
    )
    if not callable(shared_mem):
        as_count("dynamic shared memory per block (bytes)", shared_mem)
    base = make_settings(
        dev,
        1,
        registers_per_thread,
        0,
        static_shared_mem=static_shared_mem,
        max_dynamic_shared_mem=max_dynamic_shared_mem,
        carveout=carveout,
        cache_config=cache_config,
        block_barriers=block_barriers,
        partitioned_gc=partitioned_gc,
    )
    if limit == 0:
        limit = dev.max_threads_per_block
    limit = min(limit, dev.max_threads_per_block, kernel_max)
    step = dev.warp_size
    best_threads = best_size = best_blocks = 0
    aligned = -(-limit // step) * step
    while aligned > 0:
        size = min(limit, aligned)
        smem = _smem_for(shared_mem, size)
        blocks = evaluate(dev, replace(base, threads_per_block=size, dynamic_smem=smem))
        threads = size * blocks.active_blocks_per_sm
        if threads > best_threads:
            best_threads, best_size, best_blocks = threads, size, blocks.active_blocks_per_sm
        if best_threads == dev.max_threads_per_sm:
            break
        aligned -= step
    return PotentialBlockSize(best_blocks * sms, best_size)


def _smem_for(spec: SmemSpec, block_size: int) -> int:
    if not callable(spec):
        return int(spec)
    try:
        value = spec(block_size)
    except InputError:
        raise
    except Exception as exc:  # a user callable failing is bad input, reported in one line
        raise InputError(
            f"the shared-memory function failed for block size {block_size}: {exc}"
        ) from exc
    return as_count(f"shared memory for block size {block_size} (bytes)", value)
