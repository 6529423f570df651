"""Occupancy: how many blocks of a kernel fit on one SM at once, and what stops more from fitting.

This is a port of the calculation in CUDA 13.0's ``cuda_occupancy.h``
(``cudaOccMaxActiveBlocksPerMultiprocessor``), written out so that each limit reads on its own:

* **warps**: the SM holds ``max_threads_per_sm / 32`` warps; a block takes ``ceil(threads / 32)``.
* **blocks**: a fixed number of resident blocks per SM, by architecture.
* **registers**: registers are given to warps, ``registers_per_thread * 32`` rounded up to a
  multiple of 256; the register file is split evenly across the SM's warp schedulers
  (sub-partitions), so a warp must fit in one quarter (one half on CC 6.0). The per-block register
  limit is checked as if the block's warps were spread over all sub-partitions. CC 6.0 must also fit
  the 4-sub-partition layout of the other Pascal chips.
* **shared memory**: static + dynamic + the driver's reserved bytes per block, rounded up to the
  allocation granularity; the SM's shared memory is the carveout the kernel prefers (or the cache
  config), raised to the next size the SM supports when one block would not fit otherwise.
* **barriers** (CC >= 9.0): each block uses one (or more) of a fixed number of barrier slots.

The result is the minimum of these limits; every limit that equals it is reported as a limiter.
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass

from cudalens.errors import InputError
from cudalens.occupancy.device import OccDevice, device_for

#: Names of the limits, in the order reports show them.
LIMIT_NAMES = ("warps", "registers", "shared_memory", "blocks", "barriers")

CACHE_CONFIGS = ("none", "shared", "l1", "equal")  # cudaFuncCachePreferNone/Shared/L1/Equal
PARTITIONED_GC = ("off", "on", "strict")

#: Shared memory and thread counts beyond this are rejected: the header works in 32-bit ints.
_MAX_INPUT = 2**31 - 1 - 4096


def as_count(name: str, value: object, *, minimum: int = 0, maximum: int = _MAX_INPUT) -> int:
    """``value`` as an int of at least ``minimum``; InputError naming ``name`` otherwise.

    Accepts ints, numpy integers, integral floats and strings of digits; rejects bools.
    """
    if isinstance(value, bool):
        raise InputError(f"{name} must be a whole number, not {value!r}")
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text)
        except ValueError:
            raise InputError(f"{name} must be a whole number, not {text!r}") from None
    if isinstance(value, numbers.Integral):
        number = int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        number = int(value)
    else:
        raise InputError(f"{name} must be a whole number, not {value!r}")
    if number < minimum:
        raise InputError(f"{name} must be at least {minimum}, got {number}")
    if number > maximum:
        raise InputError(f"{name} must be at most {maximum}, got {number}")
    return number


@dataclass(frozen=True)
class KernelSettings:
    """Everything about a kernel and launch besides the device. Sizes in bytes."""

    threads_per_block: int
    registers_per_thread: int
    dynamic_smem: int
    static_smem: int
    max_dynamic_smem: int  # the kernel's MaxDynamicSharedMemorySize attribute
    carveout: int  # -1 = no preference (use cache_config), else percent 0..100
    cache_config: str
    block_barriers: int
    partitioned_gc: str


def make_settings(
    dev: OccDevice,
    threads_per_block: object,
    registers_per_thread: object,
    shared_mem_per_block: object = 0,
    *,
    static_shared_mem: object = 0,
    max_dynamic_shared_mem: object = None,
    carveout: object = None,
    cache_config: object = None,
    block_barriers: object = 1,
    partitioned_gc: object = "off",
) -> KernelSettings:
    """Validate the user's inputs (InputError on anything invalid) and bundle them."""
    threads = as_count("threads per block", threads_per_block, minimum=1)
    regs = as_count("registers per thread", registers_per_thread)
    dyn = as_count("dynamic shared memory per block (bytes)", shared_mem_per_block)
    static = as_count("static shared memory per block (bytes)", static_shared_mem)
    if max_dynamic_shared_mem is None:
        # As after cudaFuncSetAttribute(MaxDynamicSharedMemorySize, optin - static).
        max_dyn = max(0, dev.smem_per_block_optin - static)
    else:
        max_dyn = as_count("maximum dynamic shared memory (bytes)", max_dynamic_shared_mem)
    if carveout is None:
        carve = -1
    else:
        carve = as_count("carveout (percent)", carveout, minimum=-1, maximum=100)
    cache = "none" if cache_config is None else str(cache_config).strip().lower()
    cache = cache.removeprefix("prefer_").removeprefix("prefer")
    if cache not in CACHE_CONFIGS:
        raise InputError(f"cache config must be one of {', '.join(CACHE_CONFIGS)}, not {cache_config!r}")
    bars = as_count("block barriers", block_barriers, maximum=1 << 20)
    gc = str(partitioned_gc).strip().lower()
    if gc not in PARTITIONED_GC:
        raise InputError(f"partitioned_gc must be one of {', '.join(PARTITIONED_GC)}, not {partitioned_gc!r}")
    return KernelSettings(threads, regs, dyn, static, max_dyn, carve, cache, bars, gc)


@dataclass(frozen=True)
class OccupancyResult:
    """Resident blocks and warps per SM for one kernel and launch, and why. Sizes in bytes.

    A ``block_limit_*`` of None means that resource sets no limit (none of it is used).
    """

    cc: str
    threads_per_block: int
    registers_per_thread: int
    shared_mem_per_block: int  # dynamic
    static_shared_mem: int
    active_blocks_per_sm: int
    active_warps_per_sm: int
    active_threads_per_sm: int
    max_warps_per_sm: int
    occupancy: float  # active warps / maximum warps per SM, 0..1
    limiters: frozenset[str]
    block_limit_warps: int
    block_limit_registers: int | None
    block_limit_shared_memory: int | None
    block_limit_blocks: int
    block_limit_barriers: int | None
    warps_per_block: int
    registers_per_block: int  # as allocated: per-warp allocation x warps
    shared_mem_allocated_per_block: int  # static + dynamic + reserved, rounded to the granularity
    smem_per_sm_config: int | None  # shared memory the SM is set up with; None if no block fits
    partitioned_gc: str
    reason: str | None  # why no block fits, when active_blocks_per_sm == 0

    def block_limit(self, name: str) -> int | None:
        """The block count allowed by limit ``name`` (one of LIMIT_NAMES)."""
        return getattr(self, f"block_limit_{name}")

    @property
    def limiter_text(self) -> str:
        return describe_limiters(self)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["limiters"] = [n for n in LIMIT_NAMES if n in self.limiters]
        data["limiter_text"] = self.limiter_text
        return data


# --- shared-memory configuration of the SM -----------------------------------------------------


def align_to_config(dev: OccDevice, size: int) -> int:
    """The smallest shared-memory size the SM can be set to that holds ``size`` bytes (CC >= 7)."""
    for option in dev.smem_configs:
        if size <= option:
            return option
    raise InputError(
        f"{size} B of shared memory per SM is more than CC {dev.cc} can be configured for "
        f"(largest: {dev.smem_configs[-1] if dev.smem_configs else 0} B)"
    )


def preferred_smem_per_sm(dev: OccDevice, carveout: int, cache_config: str) -> int:
    """Shared memory per SM (bytes) that the kernel's carveout or cache preference asks for."""
    if dev.major >= 7:
        pref = carveout
        if pref == -1:  # no carveout: the cache config decides
            pref = {"l1": 0, "shared": 100, "equal": 50}.get(cache_config, -1)
        size = dev.smem_per_sm if pref == -1 else (pref * dev.smem_per_sm) // 100
        return align_to_config(dev, size)
    if dev.major == 3:  # Kepler: 16, 32 or 48 KiB of the combined array go to L1
        high = dev.smem_per_sm
        low = high + 16 * 1024 - 48 * 1024
        if cache_config == "l1":
            return low
        if cache_config == "equal":
            return (high + low) // 2
        return high
    return dev.smem_per_sm  # Maxwell, Pascal: dedicated shared memory


def smem_limit_per_block(dev: OccDevice, max_usage: int) -> int:
    """Largest shared-memory allocation (bytes) one block may have, reserved bytes included.

    ``max_usage`` is the block's largest possible use (static + reserved + maximum dynamic);
    a kernel that may use more than the default 48 KiB gets the opt-in limit (CC >= 7.0).
    """
    if dev.major >= 7 and max_usage > dev.smem_per_block:
        limit = dev.smem_per_block_optin
    else:
        limit = dev.smem_per_block
    if dev.major >= 8:
        limit += dev.reserved_smem_per_block
    return limit


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _smem_limit(dev: OccDevice, k: KernelSettings) -> tuple[int | None, int, int | None, str | None]:
    """(blocks or None for unlimited, bytes allocated per block, SM config, reason if 0)."""
    static = k.static_smem + dev.reserved_smem_per_block
    allocated = _round_up(static + k.dynamic_smem, dev.smem_alloc_granularity)
    limit = smem_limit_per_block(dev, static + k.max_dynamic_smem)
    if k.dynamic_smem > k.max_dynamic_smem:
        return 0, allocated, None, (
            f"dynamic shared memory {k.dynamic_smem} B exceeds the kernel's maximum dynamic size "
            f"{k.max_dynamic_smem} B"
        )
    if allocated > limit:
        return 0, allocated, None, (
            f"shared memory per block {allocated} B (static {k.static_smem} + dynamic "
            f"{k.dynamic_smem} + reserved {dev.reserved_smem_per_block}, rounded to "
            f"{dev.smem_alloc_granularity} B) exceeds the per-block limit {limit} B"
        )
    preference = preferred_smem_per_sm(dev, k.carveout, k.cache_config)
    if preference >= allocated:
        per_sm = preference
    elif dev.major >= 7:  # the preference is overridden so that one block fits
        per_sm = align_to_config(dev, allocated)
    else:
        per_sm = dev.smem_per_sm
    return (per_sm // allocated if allocated > 0 else None), allocated, per_sm, None


def _register_limit(
    dev: OccDevice, k: KernelSettings, gc: str, sub_partitions: int
) -> tuple[int | None, str, int, str | None]:
    """(blocks or None, partitioned-GC mode after the check, registers per block, reason if 0)."""
    warps = -(-k.threads_per_block // dev.warp_size)
    per_warp = _round_up(k.registers_per_thread * dev.warp_size, dev.reg_alloc_unit)
    per_block = per_warp * warps
    # The hardware checks the block as if its warps were spread over every sub-partition.
    assumed = per_warp * _round_up(warps, sub_partitions)
    if k.registers_per_thread > dev.max_regs_per_thread:
        return 0, gc, per_block, (
            f"{k.registers_per_thread} registers per thread exceeds the limit of "
            f"{dev.max_regs_per_thread}"
        )
    if per_block > dev.regs_per_block or assumed > dev.regs_per_block:
        return 0, gc, per_block, (
            f"the block needs {max(per_block, assumed)} registers ({per_warp} per warp x "
            f"{warps} warps, counted over {sub_partitions} sub-partitions), more than the "
            f"{dev.regs_per_block} allowed per block"
        )
    if per_warp == 0:
        return None, gc, per_block, None
    warps_per_sub = (dev.regs_per_sm // sub_partitions) // per_warp
    blocks = 0
    if gc != "off":  # a block then lives in half of the SM
        blocks = (warps_per_sub * (sub_partitions // 2) // warps) * 2
    if blocks == 0 and gc != "strict":
        gc = "off"
        blocks = warps_per_sub * sub_partitions // warps
    reason = None if blocks else (
        f"{per_warp} registers per warp leave room for {warps_per_sub * sub_partitions} warps per "
        f"SM, fewer than the block's {warps}"
    )
    return blocks, gc, per_block, reason


def _warp_limit(dev: OccDevice, k: KernelSettings, gc: str) -> tuple[int, str | None]:
    if k.threads_per_block > dev.max_threads_per_block:
        return 0, (
            f"{k.threads_per_block} threads per block exceeds the limit of "
            f"{dev.max_threads_per_block}"
        )
    warps = -(-k.threads_per_block // dev.warp_size)
    if gc != "off":
        return (dev.max_warps_per_sm // 2 // warps) * 2, None
    return dev.max_warps_per_sm // warps, None


def evaluate(dev: OccDevice, k: KernelSettings) -> OccupancyResult:
    """The occupancy of validated settings ``k`` on ``dev`` (see the module docstring)."""
    gc = k.partitioned_gc if dev.partitioned_gc_supported else "off"
    regs, gc_after, regs_per_block, regs_reason = _register_limit(dev, k, gc, dev.sub_partitions)
    if dev.major == 6 and dev.minor == 0 and regs != 0:
        # A kernel must also fit the 4-sub-partition register file of the other Pascal chips.
        other, _, _, other_reason = _register_limit(dev, k, gc_after, 4)
        if other == 0:
            regs, regs_reason = 0, other_reason
    warps, warps_reason = _warp_limit(dev, k, gc_after)
    blocks = dev.max_blocks_per_sm
    smem, smem_alloc, smem_config, smem_reason = _smem_limit(dev, k)

    inf = float("inf")
    counts: dict[str, int | None] = {
        "warps": warps, "registers": regs, "shared_memory": smem, "blocks": blocks,
    }
    barriers: int | None = None
    if dev.major >= 9 and k.block_barriers > 0 and dev.barrier_slots_per_sm is not None:
        barriers = dev.barrier_slots_per_sm // k.block_barriers
    counts["barriers"] = barriers
    active = int(min(inf if v is None else v for v in counts.values()))
    limiters = frozenset(n for n, v in counts.items() if v is not None and v == active)

    warps_per_block = -(-k.threads_per_block // dev.warp_size)
    reason = None
    if active == 0:
        reasons = [warps_reason, regs_reason, smem_reason]
        if barriers == 0:
            reasons.append(
                f"{k.block_barriers} barriers per block exceed the {dev.barrier_slots_per_sm} "
                "barrier slots per SM"
            )
        reason = "; ".join(r for r in reasons if r)
    active_warps = active * warps_per_block
    return OccupancyResult(
        cc=dev.cc,
        threads_per_block=k.threads_per_block,
        registers_per_thread=k.registers_per_thread,
        shared_mem_per_block=k.dynamic_smem,
        static_shared_mem=k.static_smem,
        active_blocks_per_sm=active,
        active_warps_per_sm=active_warps,
        active_threads_per_sm=active * k.threads_per_block,
        max_warps_per_sm=dev.max_warps_per_sm,
        occupancy=active_warps / dev.max_warps_per_sm,
        limiters=limiters,
        block_limit_warps=warps,
        block_limit_registers=regs,
        block_limit_shared_memory=smem,
        block_limit_blocks=blocks,
        block_limit_barriers=barriers,
        warps_per_block=warps_per_block,
        registers_per_block=regs_per_block,
        shared_mem_allocated_per_block=smem_alloc,
        smem_per_sm_config=smem_config,
        partitioned_gc=gc_after,
        reason=reason,
    )


def calculate(
    cc: "str | float | tuple[int, int] | OccDevice" = "9.0",
    threads_per_block: int = 256,
    registers_per_thread: int = 32,
    shared_mem_per_block: int = 0,
    *,
    static_shared_mem: int = 0,
    max_dynamic_shared_mem: int | None = None,
    carveout: int | None = None,
    cache_config: str | None = None,
    block_barriers: int = 1,
    partitioned_gc: str = "off",
) -> OccupancyResult:
    """Resident blocks, warps and occupancy per SM, exactly as CUDA 13.0's cuda_occupancy.h.

    ``cc``: a compute capability ("9.0", "sm_90", 9.0, (9, 0)) or an :class:`OccDevice` read live.
    ``shared_mem_per_block``: dynamic shared memory in bytes. By default the kernel is taken as
    opted in to the device's largest per-block size (cudaFuncSetAttribute with
    MaxDynamicSharedMemorySize = opt-in limit - static); pass ``max_dynamic_shared_mem`` for another
    attribute value. ``carveout``: preferred shared-memory share of the unified L1/shared array in
    percent (None = no preference); ``cache_config`` ("none", "shared", "l1", "equal") applies when
    no carveout is given. ``block_barriers``: barriers a block uses (a compiled kernel counts 1).
    ``partitioned_gc``: partitioned global caching ("off", "on", "strict"; CC 5.2-6.2 only).

    A configuration that can never run (block too large, too many registers or too much shared
    memory) gives 0 blocks and a ``reason``; invalid input (negative or non-numeric sizes, zero
    threads, unknown compute capability) raises :class:`cudalens.errors.InputError`.

    Limiters: every limit whose block count equals the result. (The header, given two or more
    barriers per block, also flags limits that the barrier limit undercuts; with 0 or 1 barrier, as
    for every compiled kernel, the two agree.)
    """
    dev = device_for(cc)
    settings = make_settings(
        dev,
        threads_per_block,
        registers_per_thread,
        shared_mem_per_block,
        static_shared_mem=static_shared_mem,
        max_dynamic_shared_mem=max_dynamic_shared_mem,
        carveout=carveout,
        cache_config=cache_config,
        block_barriers=block_barriers,
        partitioned_gc=partitioned_gc,
    )
    return evaluate(dev, settings)


_LIMIT_WORDS = {
    "warps": "warp slots ({n} blocks of {w} warps fill the SM's {m} warps)",
    "registers": "registers ({rb} registers per block allow {n} block{s})",
    "shared_memory": "shared memory ({sb} B per block allow {n} block{s} in {sm} B)",
    "blocks": "the maximum of {n} resident blocks per SM",
    "barriers": "barrier slots ({n} block{s})",
}


def describe_limiters(result: OccupancyResult) -> str:
    """The limiter(s) of ``result`` in words, e.g. 'registers (... allow 4 blocks)'."""
    if result.active_blocks_per_sm == 0:
        return f"no block fits: {result.reason}"
    parts = []
    for name in LIMIT_NAMES:
        if name in result.limiters:
            parts.append(
                _LIMIT_WORDS[name].format(
                    n=result.active_blocks_per_sm,
                    s="" if result.active_blocks_per_sm == 1 else "s",
                    w=result.warps_per_block,
                    m=result.max_warps_per_sm,
                    rb=result.registers_per_block,
                    sb=result.shared_mem_allocated_per_block,
                    sm=result.smem_per_sm_config,
                )
            )
    return "limited by " + " and ".join(parts)
