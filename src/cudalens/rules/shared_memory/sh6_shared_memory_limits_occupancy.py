"""SH6: Shared memory use as an occupancy limiter."""

from __future__ import annotations

from typing import Iterator

from cudalens.compiled.launch import occupancy_block
from cudalens.findings import Finding, Layer
from cudalens.rules._compiled import compiled_kernels, occupancy_at_launch
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("SH6", name="shared-memory-limits-occupancy", layers="M L", measured="occupancy")
def shared_memory_limits_occupancy(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Reports kernels whose resident blocks per SM are limited by shared memory (static from the
    cubin plus the launch's dynamic shared memory, plus the per-block reserve).

    Why it matters
    Shared memory per SM is fixed; a block that takes a large share of it keeps other blocks off
    the SM even when registers and warp slots are free.

    Example
        __shared__ float tile[12288];   // 48 KB: 4 blocks per SM on CC 9.0, 16 warps of 64

    Fix
    Use smaller tiles, reuse buffers across phases, move read-only tables to constant memory, or
    raise the shared-memory carveout; larger blocks sharing one tile also help.
    """
    for name, k in compiled_kernels(ctx):
        at = occupancy_at_launch(ctx, name, k)
        if at is None:
            continue
        cfg, occ = at
        if occ is None or "shared_memory" not in occ.limiters or occ.occupancy >= 1.0:
            continue
        total = k.resources.static_shared_bytes + cfg.dynamic_smem
        yield ctx.finding(
            ctx.kernel_line(name),
            f"kernel {name}: {total} B shared memory per block limits the SM to "
            f"{occ.active_blocks_per_sm} blocks ({occ.occupancy:.0%} occupancy)",
            "shrink or reuse the shared-memory tiles, or raise the carveout "
            "(cudaFuncAttributePreferredSharedMemoryCarveout)",
            kernel=name,
            layer=Layer.COMPILED,
            facts=(
                ("static_shared_bytes", k.resources.static_shared_bytes),
                ("dynamic_shared_bytes", cfg.dynamic_smem),
                ("occupancy", occupancy_block(occ)),
            ),
            impact=1.0 - occ.occupancy,
            impact_text="share of warp slots left empty",
        )
