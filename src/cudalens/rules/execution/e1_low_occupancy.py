"""E1: Enough occupancy to hide latency."""

from __future__ import annotations

from typing import Iterator

from cudalens.compiled.launch import occupancy_block
from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._compiled import (
    LOW_OCCUPANCY,
    compiled_kernels,
    occupancy_at_launch,
)
from cudalens.rules._counters import counted
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule(
    "E1",
    name="low-occupancy",
    layers="M C P",
    measured="occupancy",
    verified_by="theoretical occupancy",
)
def low_occupancy(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Computes the theoretical occupancy of each kernel at its launch configuration from its
    compiled resources, and reports it when it is below 50 %, naming the limiting resource.

    Why it matters
    Latency is hidden by switching among resident warps. Too few resident warps per SM leave the
    schedulers idle while loads are in flight (unless the kernel has much instruction-level
    parallelism of its own).

    Example
        big_tile<<<grid, 128>>>(...);   // 48 KB shared memory per block: 4 blocks, 16 of 64 warps

    Fix
    Relieve the limiter the finding names: fewer registers (L2), less shared memory per block
    (SH6), larger blocks when the block-count limit binds; then measure.
    """
    for name, k in compiled_kernels(ctx):
        at = occupancy_at_launch(ctx, name, k)
        if at is None:
            continue
        cfg, occ = at
        if occ is None or occ.occupancy >= LOW_OCCUPANCY:
            continue
        limiters = sorted(occ.limiters)
        yield ctx.finding(
            ctx.kernel_line(name),
            f"kernel {name}: theoretical occupancy {occ.occupancy:.0%} "
            f"({occ.active_blocks_per_sm} blocks, {occ.active_warps_per_sm} warps per SM at "
            f"{cfg.threads_per_block} threads per block), limited by {', '.join(limiters) or 'nothing'}",
            f"relieve the limiter ({', '.join(limiters)}) or confirm by measurement that occupancy "
            "does not matter for this kernel",
            kernel=name,
            layer=Layer.COMPILED,
            facts=(("occupancy", occupancy_block(occ)), ("launch", cfg.origin)),
            impact=1.0 - occ.occupancy / LOW_OCCUPANCY,
            impact_text="shortfall below 50% occupancy",
        )


@rule("E1", name="low-occupancy", layers="R", requires=("trace_kernel",))
def low_occupancy_at_traced_launch(ctx: RuleContext) -> Iterator[Finding]:
    """Theoretical occupancy under 50 % at a traced launch (registers and shared memory as launched)."""
    assert ctx.trace_kernel is not None
    k, occ = ctx.trace_kernel.summary, ctx.trace_kernel.occupancy
    if occ and occ["occupancy"] < 0.5:
        yield ctx.finding(
            None, (f"theoretical occupancy {occ['occupancy']:.0%} at the traced launch ({occ['threads_per_block']} "
                   f"threads/block, {k.registers} registers/thread, {k.static_shared + k.dynamic_shared} B shared; "
                   f"limited by {', '.join(occ['limiters']) or '-'})"),
            "reduce the limiting resource (registers: __launch_bounds__ or -maxrregcount; shared memory: "
            "smaller tiles) or change the block size (cudalens occupancy)",
            kernel=k.name, file=ctx.trace_kernel.program, impact=k.span_share,
            impact_text="the kernel's share of the traced span (upper bound)",
            evidence=(Evidence(Layer.RUNTIME, "launch configuration (CUPTI)", dict(occ)),
                      Evidence(Layer.MODEL, "theoretical occupancy", occ["occupancy"])))


@rule("E1", name="low-occupancy", layers="P", requires=("counters",))
def low_achieved_occupancy(ctx: RuleContext) -> Iterator[Finding]:
    """Achieved occupancy under 60 % of the theoretical one in a profiled launch (Nsight Compute)."""
    assert ctx.counters is not None
    m = ctx.counters.metrics
    if m.achieved_occupancy is not None and m.theoretical_occupancy and \
            m.achieved_occupancy < 0.6 * m.theoretical_occupancy:
        yield counted(ctx, f"achieved occupancy {m.achieved_occupancy:.0%} of a theoretical {m.theoretical_occupancy:.0%}",
                      "look for load imbalance or a tail effect (too few blocks per wave)", None, "achieved occupancy",
                      m.achieved_occupancy)
