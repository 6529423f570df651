"""Occupancy at a launch site: the compiled kernel's registers and static shared memory, plus the
launch's block size and dynamic shared memory, through the occupancy calculator.

Where the launch configuration comes from, first found wins:

1. the launch the project's launch table resolved for the kernel (``Kernel.launch``, see
   :mod:`cudalens.project.resolve`) when one was found or given, not assumed;
2. the kernel's ``__launch_bounds__`` maximum block size.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable


def _calculator():
    """The occupancy calculator's ``calculate``, or None while it is not importable."""
    try:
        from cudalens.occupancy import calculate  # type: ignore[attr-defined]

        return calculate
    except ImportError:
        pass
    try:
        from cudalens.occupancy.calculator import calculate

        return calculate
    except ImportError:
        return None


@dataclass(frozen=True)
class LaunchConfig:
    threads_per_block: int
    dynamic_smem: int
    origin: str  # "launch: file.cu:N" / "launch: given on the command line" (ResolvedLaunch.describe) | "__launch_bounds__"


def _threads(block: Any) -> int | None:
    if isinstance(block, int):
        return block
    if isinstance(block, (tuple, list)) and block and all(isinstance(b, int) for b in block):
        n = 1
        for b in block:
            n *= b
        return n
    return None


def launch_config(kernel_name: str, source: Any = None) -> LaunchConfig | None:
    """The block size and dynamic shared memory of ``kernel_name``'s launch, or None if unknown."""
    for k in getattr(source, "kernels", ()):
        if k.name != kernel_name:
            continue
        r = k.launch
        if r is not None and r.origin != "assumed" and isinstance(r.block, tuple):
            smem = r.dynamic_smem if isinstance(r.dynamic_smem, int) else getattr(r.dynamic_smem, "lo", 0)
            return LaunchConfig(_threads(r.block) or 0, int(smem or 0), r.describe())
        if k.launch_bounds:
            return LaunchConfig(k.launch_bounds[0], 0, "__launch_bounds__")
    return None


def occupancy(kernel: Any, cc: str, threads_per_block: int, dynamic_smem: int = 0) -> Any | None:
    """The calculator's result for compiled ``kernel`` launched with ``threads_per_block``: once per process
    for each (resources it reads, launch), a frozen record (the join and rules E1, SH6, L2 and L3 ask for each
    kernel's: 488 calculator runs on llm.c where 35 differ)."""
    if _calculator() is None:
        return None
    res = kernel.resources
    return _occupancy(cc, threads_per_block, res.registers, dynamic_smem, res.static_shared_bytes,
                      min(res.barriers, 1) if res.barriers else 0)


@functools.lru_cache(maxsize=256)
def _occupancy(cc: str, threads_per_block: int, registers: int, dynamic_smem: int, static_smem: int,
               barriers: int) -> Any:
    return _calculator()(cc=cc, threads_per_block=threads_per_block, registers_per_thread=registers,
                         shared_mem_per_block=dynamic_smem, static_shared_mem=static_smem, block_barriers=barriers)


def occupancy_block(result: Any) -> dict[str, Any]:
    """The JSON block ``"occupancy": {...}`` of a calculator result."""
    return {
        "threads_per_block": result.threads_per_block,
        "active_blocks_per_sm": result.active_blocks_per_sm,
        "active_warps_per_sm": result.active_warps_per_sm,
        "occupancy": result.occupancy,
        "limiters": sorted(result.limiters),
    }


@dataclass(frozen=True)
class RegisterStep:
    """Registers per thread against resident blocks, around the kernel's current count."""

    registers: int
    blocks: int
    fewer_registers: int | None  # the most registers that give more blocks (None: none does)
    blocks_with_fewer: int | None
    more_registers: int | None  # the fewest registers that give fewer blocks (the cliff)
    blocks_with_more: int | None


@functools.lru_cache(maxsize=1 << 16)
def _active_blocks(cc: str, threads_per_block: int, registers: int, dynamic_smem: int, static_smem: int,
                   barriers: int) -> int:
    """Blocks per SM for one launch shape (the calculator is pure; register_steps asks the same shapes
    again for every kernel of a file, up to 240 register counts each)."""
    calculate = _calculator()
    return calculate(cc=cc, threads_per_block=threads_per_block, registers_per_thread=registers,
                     shared_mem_per_block=dynamic_smem, static_shared_mem=static_smem,
                     block_barriers=barriers).active_blocks_per_sm


def register_steps(kernel: Any, cc: str, threads_per_block: int, dynamic_smem: int = 0, max_regs: int = 255) -> RegisterStep | None:
    """Where the next occupancy step is, in registers per thread (what-if on the calculator)."""
    if _calculator() is None:
        return None
    res = kernel.resources
    barriers = 1 if res.barriers else 0

    def blocks(regs: int) -> int:
        return _active_blocks(cc, threads_per_block, regs, dynamic_smem, res.static_shared_bytes, barriers)

    # blocks(r) never grows with r (the calculator's register limit is a floor of the file over a rounded-up
    # allocation; tests/occupancy/test_register_steps.py checks it over the whole table): the counts that give
    # more blocks are those below some count, those that give fewer are those above another, each found by
    # bisection (a scan one register at a time asked the calculator up to 240 times per kernel and launch)
    now = blocks(res.registers)
    fewer = _last(16, res.registers - 1, lambda r: blocks(r) > now)  # 16 registers: a practical floor
    more = _first(res.registers + 1, max_regs, lambda r: blocks(r) < now)
    return RegisterStep(res.registers, now, fewer, blocks(fewer) if fewer is not None else None,
                        more, blocks(more) if more is not None else None)


def _last(lo: int, hi: int, holds: Callable[[int], bool]) -> int | None:
    """The largest r in [lo, hi] where ``holds`` (true on a prefix of the range), or None."""
    if hi < lo or not holds(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if holds(mid) else (lo, mid - 1)
    return lo


def _first(lo: int, hi: int, holds: Callable[[int], bool]) -> int | None:
    """The smallest r in [lo, hi] where ``holds`` (true on a suffix of the range), or None."""
    if hi < lo or not holds(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if holds(mid) else (mid + 1, hi)
    return lo
