"""L2: Control register pressure."""

from __future__ import annotations

from typing import Iterator

from cudalens.compiled.launch import occupancy_block, register_steps
from cudalens.findings import Finding, Layer
from cudalens.rules._compiled import (
    LOW_OCCUPANCY,
    compiled_kernels,
    occupancy_at_launch,
)
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("L2", name="register-pressure", layers="C M L", measured="occupancy")
def register_pressure(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    At the kernel's launch configuration, reports when registers per thread are what limits the
    resident blocks per SM to below 50 % occupancy, and how many registers would allow one more block.

    Why it matters
    The register file is shared by all resident threads. A kernel that needs many registers per
    thread leaves room for fewer blocks, so fewer warps are available to hide latency.

    Example
        many_accumulators<<<1024, 256>>>(...);   // 78 registers -> 3 blocks of 256 threads per SM

    Fix
    Cap the registers with ``__launch_bounds__(threads, minBlocksPerSM)`` (per kernel) or
    ``-maxrregcount=N`` (per file), then check that ptxas does not start to spill (rule L1) and
    measure: more occupancy is not always faster.
    """
    for name, k in compiled_kernels(ctx):
        at = occupancy_at_launch(ctx, name, k)
        if at is None:
            continue
        cfg, occ = at
        if occ is None or "registers" not in occ.limiters or occ.occupancy >= LOW_OCCUPANCY:
            continue
        step = register_steps(k, ctx.cc, cfg.threads_per_block, cfg.dynamic_smem)
        if step is None or step.fewer_registers is None:
            continue
        yield ctx.finding(
            ctx.kernel_line(name),
            f"kernel {name}: {k.resources.registers} registers per thread limit it to "
            f"{occ.active_blocks_per_sm} blocks of {cfg.threads_per_block} threads per SM "
            f"({occ.occupancy:.0%} occupancy); at {step.fewer_registers} registers "
            f"{step.blocks_with_fewer} blocks fit",
            f"add __launch_bounds__({cfg.threads_per_block}, {step.blocks_with_fewer}) to the kernel "
            f"or compile with -maxrregcount={step.fewer_registers}, then check for spills and measure",
            kernel=name,
            layer=Layer.COMPILED,
            facts=(
                ("registers", k.resources.registers),
                ("occupancy", occupancy_block(occ)),
                ("registers_for_next_step", step.fewer_registers),
                ("blocks_at_next_step", step.blocks_with_fewer),
            ),
            impact=1.0 - occ.occupancy,
            impact_text="share of warp slots left empty",
        )
