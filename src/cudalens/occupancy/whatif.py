"""What-if: where occupancy steps up or down around the current launch.

Occupancy is a staircase in registers per thread and in shared memory per block. Around the
current point this module finds, for each of the two:

* the **cliff**: the first value above the current one at which fewer blocks fit ("one more
  register and 2 blocks become 1"), and so the headroom before it;
* the **gain**: the nearest value below the current one at which more blocks fit (how far to cut).

It also gives the block size that maximizes occupancy for the same kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cudalens.occupancy.blocksize import PotentialBlockSize, max_potential_block_size
from cudalens.occupancy.calculator import OccupancyResult, calculate, describe_limiters
from cudalens.occupancy.device import OccDevice, device_for
from cudalens.occupancy.sweep import blocks_grid


@dataclass(frozen=True)
class Step:
    """One point of the staircase: a register count or a byte count and the occupancy there."""

    value: int
    blocks_per_sm: int
    occupancy: float  # 0..1


@dataclass(frozen=True)
class WhatIf:
    """The neighbourhood of one launch configuration. Shared-memory values are dynamic bytes."""

    current: OccupancyResult
    limiter_text: str
    registers_cliff: Step | None  # first register count above the current with fewer blocks
    registers_gain: Step | None  # nearest register count below the current with more blocks
    smem_cliff: Step | None  # first dynamic byte count above the current with fewer blocks
    smem_gain: Step | None  # nearest dynamic byte count below the current with more blocks
    best_block_size: PotentialBlockSize
    best_block_occupancy: float  # occupancy at best_block_size, 0..1

    @property
    def register_headroom(self) -> int | None:
        """Registers per thread that can be added without losing a block (None: no cliff)."""
        if self.registers_cliff is None:
            return None
        return self.registers_cliff.value - 1 - self.current.registers_per_thread

    @property
    def smem_headroom(self) -> int | None:
        """Bytes of dynamic shared memory that can be added without losing a block."""
        if self.smem_cliff is None:
            return None
        return self.smem_cliff.value - 1 - self.current.shared_mem_per_block

    def sentences(self) -> tuple[str, ...]:
        """The what-if in words, one finding per sentence."""
        cur = self.current
        out = [f"Occupancy {cur.occupancy:.1%} ({cur.active_blocks_per_sm} blocks/SM): "
               f"{self.limiter_text}."]
        if self.registers_cliff is not None:
            c = self.registers_cliff
            more = c.value - cur.registers_per_thread
            out.append(
                f"{more} more register{'s' if more != 1 else ''} per thread ({c.value}) and "
                f"{cur.active_blocks_per_sm} blocks/SM become {c.blocks_per_sm} "
                f"({c.occupancy:.1%})."
            )
        if self.registers_gain is not None:
            g = self.registers_gain
            out.append(
                f"At {g.value} registers per thread ({cur.registers_per_thread - g.value} fewer) "
                f"{g.blocks_per_sm} blocks/SM fit ({g.occupancy:.1%})."
            )
        if self.smem_cliff is not None:
            c = self.smem_cliff
            out.append(
                f"{c.value - cur.shared_mem_per_block} B more dynamic shared memory ({c.value} B) "
                f"and {cur.active_blocks_per_sm} blocks/SM become {c.blocks_per_sm} "
                f"({c.occupancy:.1%})."
            )
        if self.smem_gain is not None:
            g = self.smem_gain
            out.append(
                f"At {g.value} B dynamic shared memory ({cur.shared_mem_per_block - g.value} B "
                f"less) {g.blocks_per_sm} blocks/SM fit ({g.occupancy:.1%})."
            )
        best = self.best_block_size
        if best.block_size and best.block_size != cur.threads_per_block:
            out.append(
                f"Block size {best.block_size} threads gives the highest occupancy "
                f"({self.best_block_occupancy:.1%})."
            )
        return tuple(out)

    def to_dict(self) -> dict:
        def step(s: Step | None):
            return None if s is None else {
                "value": s.value, "blocks_per_sm": s.blocks_per_sm, "occupancy": s.occupancy}
        return {
            "limiter_text": self.limiter_text,
            "registers_cliff": step(self.registers_cliff),
            "registers_gain": step(self.registers_gain),
            "register_headroom": self.register_headroom,
            "smem_cliff_bytes": step(self.smem_cliff),
            "smem_gain_bytes": step(self.smem_gain),
            "smem_headroom_bytes": self.smem_headroom,
            "best_block_size": self.best_block_size.block_size,
            "best_block_occupancy": self.best_block_occupancy,
            "sentences": list(self.sentences()),
        }


def _steps(values: np.ndarray, blocks: np.ndarray, current_value: int, current_blocks: int,
           warps: int, max_warps: int) -> tuple[Step | None, Step | None]:
    """Cliff (first value above the current with fewer blocks) and gain (nearest below, more)."""
    cliff = gain = None
    above = np.nonzero((values > current_value) & (blocks < current_blocks))[0]
    if above.size:
        i = above[0]
        cliff = Step(int(values[i]), int(blocks[i]), int(blocks[i]) * warps / max_warps)
    below = np.nonzero((values < current_value) & (blocks > current_blocks))[0]
    if below.size:
        i = below[-1]
        gain = Step(int(values[i]), int(blocks[i]), int(blocks[i]) * warps / max_warps)
    return cliff, gain


def what_if(
    cc: "str | float | tuple[int, int] | OccDevice",
    threads_per_block: int,
    registers_per_thread: int,
    shared_mem_per_block: int = 0,
    *,
    static_shared_mem: int = 0,
    carveout: int | None = None,
    cache_config: str | None = None,
    block_barriers: int = 1,
) -> WhatIf:
    """The occupancy steps around one launch configuration (see the module docstring)."""
    dev = device_for(cc)
    common = dict(static_shared_mem=static_shared_mem, carveout=carveout,
                  cache_config=cache_config, block_barriers=block_barriers)
    cur = calculate(dev, threads_per_block, registers_per_thread, shared_mem_per_block, **common)
    warps, max_warps = cur.warps_per_block, cur.max_warps_per_sm

    regs = np.arange(0, dev.max_regs_per_thread + 2, dtype=np.int64)
    regs = np.union1d(regs, [cur.registers_per_thread])
    reg_blocks = blocks_grid(dev, cur.threads_per_block, regs, cur.shared_mem_per_block,
                             **common)["active"]
    reg_cliff, reg_gain = _steps(regs, reg_blocks, cur.registers_per_thread,
                                 cur.active_blocks_per_sm, warps, max_warps)

    # Blocks change only where the rounded allocation changes: evaluate the first byte of every
    # allocation granule (and zero, the current value and one past the kernel's maximum).
    gran = dev.smem_alloc_granularity
    base = cur.static_shared_mem + dev.reserved_smem_per_block
    max_dyn = max(dev.smem_per_block_optin - cur.static_shared_mem, 0)
    top = max(max_dyn, cur.shared_mem_per_block) + 1
    firsts = np.arange(-(-base // gran) * gran - base + 1, top + 1, gran, dtype=np.int64)
    smem = np.union1d(firsts[firsts >= 0], [0, cur.shared_mem_per_block, max_dyn + 1])
    smem_blocks = blocks_grid(dev, cur.threads_per_block, cur.registers_per_thread, smem,
                              **common)["active"]
    smem_cliff, _ = _steps(smem, smem_blocks, cur.shared_mem_per_block,
                           cur.active_blocks_per_sm, warps, max_warps)
    # For the gain, the best value is the *last* byte of a granule with more blocks.
    lasts = np.union1d(np.maximum(firsts - 1, 0), [0])
    lasts = lasts[lasts < cur.shared_mem_per_block]
    smem_gain = None
    if lasts.size:
        last_blocks = blocks_grid(dev, cur.threads_per_block, cur.registers_per_thread, lasts,
                                  **common)["active"]
        _, smem_gain = _steps(lasts, last_blocks, cur.shared_mem_per_block,
                              cur.active_blocks_per_sm, warps, max_warps)

    best = max_potential_block_size(
        dev, cur.registers_per_thread, cur.shared_mem_per_block, **common
    )
    best_occ = 0.0
    if best.block_size:
        best_occ = calculate(dev, best.block_size, cur.registers_per_thread,
                             cur.shared_mem_per_block, **common).occupancy
    return WhatIf(cur, describe_limiters(cur), reg_cliff, reg_gain, smem_cliff, smem_gain,
                  best, best_occ)
