"""The device description the occupancy calculator works from.

CUDA's ``cuda_occupancy.h`` takes two kinds of device facts:

* what ``cudaGetDeviceProperties`` reports (threads and registers per SM, shared memory per SM and
  per block, the reserved shared memory per block, the SM count), and
* architecture constants it hard-codes per compute capability (blocks per SM, register and shared
  memory allocation granularity, warp-scheduler sub-partitions, the shared-memory sizes an SM can be
  configured to, barrier slots).

:class:`OccDevice` holds both. :func:`device_for` fills it from the hardware table
(``cudalens.hardware.table``); :func:`device_from_properties` lets a caller that queried a real GPU
replace the reported properties with the live values while keeping the architecture constants.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from cudalens.errors import InputError
from cudalens.hardware.table import CCLimits, limits

#: Every CUDA GPU since compute capability 2.0 allows 1024 threads per block.
MAX_THREADS_PER_BLOCK = 1024

#: The Kepler L1 sizes the header assumes when it turns a cache preference into shared memory.
_KEPLER_MIN_L1 = 16 * 1024
_KEPLER_MAX_L1 = 48 * 1024


@dataclass(frozen=True)
class OccDevice:
    """One GPU as the occupancy calculator sees it. Sizes in bytes, counts per SM unless stated."""

    cc: str
    major: int
    minor: int
    # --- what the device reports (cudaDeviceProp) ---
    max_threads_per_block: int
    max_threads_per_sm: int
    regs_per_block: int
    regs_per_sm: int
    warp_size: int
    smem_per_block: int  # per-block limit without opt-in (48 KiB everywhere)
    smem_per_sm: int
    smem_per_block_optin: int
    reserved_smem_per_block: int  # the driver adds this to every block (1 KiB from CC 8.0)
    num_sms: int | None  # unknown for a table-only device
    # --- architecture constants (hard-coded per CC in cuda_occupancy.h) ---
    max_blocks_per_sm: int
    reg_alloc_unit: int  # registers per warp are rounded up to a multiple of this
    max_regs_per_thread: int
    sub_partitions: int  # the register file is split across this many warp schedulers
    smem_alloc_granularity: int
    smem_configs: tuple[int, ...]  # shared-memory sizes an SM can be set to (CC >= 7.0), ascending
    barrier_slots_per_sm: int | None  # counted only on CC >= 9.0
    partitioned_gc_supported: bool  # partitioned global caching (CC 5.2, 5.3, 6.1, 6.2)

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @property
    def source(self) -> str:
        return "live device" if self.num_sms is not None else "hardware table"


def _parse_configs(text: str) -> tuple[int, ...]:
    """'0,8,16,32,64,100 (note)' -> sizes in bytes; () when the text is not such a list."""
    head = text.split("(")[0].strip()
    if not re.fullmatch(r"\d+(\s*,\s*\d+)*", head):
        return ()
    return tuple(sorted(int(x) * 1024 for x in head.split(",")))


def _from_limits(lim: CCLimits) -> OccDevice:
    configs = _parse_configs(lim.smem_carveout_options_text) if lim.major >= 7 else ()
    if lim.major >= 7 and not configs:
        raise InputError(f"hardware table lists no shared-memory configurations for CC {lim.cc}")
    gc = (lim.major == 5 and lim.minor in (2, 3)) or (lim.major == 6 and lim.minor != 0)
    return OccDevice(
        cc=lim.cc,
        major=lim.major,
        minor=lim.minor,
        max_threads_per_block=MAX_THREADS_PER_BLOCK,
        max_threads_per_sm=lim.max_threads_per_sm,
        regs_per_block=lim.max_regs_per_block,
        regs_per_sm=lim.regs_per_sm,
        warp_size=lim.warp_size,
        smem_per_block=lim.max_smem_per_block_default,
        smem_per_sm=lim.smem_per_sm,
        smem_per_block_optin=lim.max_smem_per_block_optin,
        reserved_smem_per_block=lim.reserved_smem_per_block,
        num_sms=None,
        max_blocks_per_sm=lim.max_blocks_per_sm,
        reg_alloc_unit=lim.reg_alloc_unit,
        max_regs_per_thread=lim.max_regs_per_thread_header,
        sub_partitions=lim.sub_partitions,
        smem_alloc_granularity=lim.smem_alloc_granularity,
        smem_configs=configs,
        barrier_slots_per_sm=lim.barrier_slots_per_sm,
        partitioned_gc_supported=gc,
    )


def device_for(cc: "str | float | tuple[int, int] | OccDevice") -> OccDevice:
    """The device of compute capability ``cc`` as the hardware table describes it.

    An :class:`OccDevice` passes through unchanged, so every function that takes ``cc`` also
    takes a live device. Raises InputError for a malformed or unknown compute capability.
    """
    if isinstance(cc, OccDevice):
        return cc
    return _table_device(limits(cc).cc)


@functools.lru_cache(maxsize=64)
def _table_device(cc: str) -> OccDevice:
    """(the table's device of a known compute capability, made once: every calculation asks for it)"""
    return _from_limits(limits(cc))


def device_from_properties(
    cc: "str | tuple[int, int]",
    *,
    num_sms: int,
    max_threads_per_block: int | None = None,
    max_threads_per_sm: int | None = None,
    regs_per_block: int | None = None,
    regs_per_sm: int | None = None,
    warp_size: int | None = None,
    smem_per_block: int | None = None,
    smem_per_sm: int | None = None,
    smem_per_block_optin: int | None = None,
    reserved_smem_per_block: int | None = None,
) -> OccDevice:
    """A device whose reported properties come from a live query; omitted ones come from the table.

    The architecture constants (blocks per SM, granularities, sub-partitions, shared-memory
    configurations) always come from the table row of ``cc``, as the header hard-codes them.
    """
    base = device_for(cc)
    given = {
        "max_threads_per_block": max_threads_per_block,
        "max_threads_per_sm": max_threads_per_sm,
        "regs_per_block": regs_per_block,
        "regs_per_sm": regs_per_sm,
        "warp_size": warp_size,
        "smem_per_block": smem_per_block,
        "smem_per_sm": smem_per_sm,
        "smem_per_block_optin": smem_per_block_optin,
        "reserved_smem_per_block": reserved_smem_per_block,
    }
    changes = {k: int(v) for k, v in given.items() if v is not None}
    bad = [k for k, v in changes.items() if v < 0 or (v == 0 and k != "reserved_smem_per_block")]
    if bad or num_sms <= 0:
        raise InputError(f"device properties must be positive: {', '.join(bad or ['num_sms'])}")
    return replace(base, num_sms=int(num_sms), **changes)
