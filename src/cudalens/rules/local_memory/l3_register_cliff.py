"""L3: Register count at an occupancy step."""

from __future__ import annotations

from typing import Iterator

from cudalens.compiled.launch import register_steps
from cudalens.findings import Finding, Layer
from cudalens.rules._compiled import compiled_kernels, occupancy_at_launch
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule

#: L3: a register cliff is this many registers per thread away or closer.
CLIFF_DISTANCE = 2


@rule("L3", name="register-cliff", layers="M", measured="occupancy", advisory=True)
def register_cliff(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Reports kernels that sit just below a register cliff: a couple more registers per thread
    (a small code change, another compiler version) would lower the resident blocks per SM.

    Advisory: nothing is lost today; the finding ranks after those that name a present cost.

    Why it matters
    Registers are allocated per warp in fixed units, and blocks are resident whole, so occupancy
    falls in steps. A kernel at the edge of a step can lose a large share of its warps from one
    extra register, with no visible change in its source.

    Example
        // 64 registers, 256 threads: 4 blocks per SM; at 65 registers only 3 fit.

    Fix
    Pin the budget with ``__launch_bounds__`` so the compiler keeps under the cliff, or choose a
    block size whose steps are farther away; re-check after compiler upgrades.
    """
    for name, k in compiled_kernels(ctx):
        at = occupancy_at_launch(ctx, name, k)
        if at is None:
            continue
        cfg, occ = at
        if occ is None or occ.active_blocks_per_sm == 0:
            continue
        step = register_steps(k, ctx.cc, cfg.threads_per_block, cfg.dynamic_smem)
        if step is None or step.more_registers is None or step.blocks_with_more is None:
            continue
        distance = step.more_registers - step.registers
        if distance > CLIFF_DISTANCE:
            continue
        lost = 1.0 - step.blocks_with_more / step.blocks
        yield ctx.finding(
            ctx.kernel_line(name),
            f"kernel {name} is {distance} register(s) below a cliff: at {step.more_registers} "
            f"registers per thread the SM holds {step.blocks_with_more} instead of {step.blocks} "
            f"blocks of {cfg.threads_per_block} threads",
            f"pin the budget with __launch_bounds__({cfg.threads_per_block}, {step.blocks}) so a "
            "later change cannot push it over",
            kernel=name,
            layer=Layer.COMPILED,
            facts=(
                ("registers", step.registers),
                ("cliff_at_registers", step.more_registers),
                ("blocks_now", step.blocks),
                ("blocks_past_cliff", step.blocks_with_more),
            ),
            impact=lost,
            impact_text="share of resident blocks lost past the cliff",
        )
