"""A1: Find the hotspots by profiling before parallelizing."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules import _trace as tr
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("A1", name="hotspot-kernels-first", layers="R", requires=("trace",))
def hotspot_kernels_first(ctx: RuleContext) -> Iterator[Finding]:
    """The kernels that take most of a traced run's GPU time, and a GPU idle between launches.

    What it does:
        From a traced run (`cudalens profile`), names each of the top kernels (5 by default) that
        takes at least 5 % of the GPU's kernel time, with the Amdahl bound of making it 2x faster
        and of removing it; and reports a GPU idle more than 20 % of the assessed span (over 1 ms),
        with its largest gaps.

    Why it matters:
        The guide's first step (APOD's Assess): the time a program can save is bounded by the share
        of the time the optimized part takes. Work on the kernel that takes 60 % of the span before
        one that takes 2 %; and when the GPU waits for the host, no kernel change helps.

    Example:
        ```python
        for step in range(1000):
            y = model(x)          # 95 % of the GPU time in two kernels
            loss = y.sum().item() # the host waits, then launches again: the GPU idles
        ```

    Fix:
        Start with the first kernel named, and read its own findings. For an idle GPU, profile the
        host code between launches, batch work into fewer, larger launches or CUDA graphs, and move
        host work off the critical path.
    """
    assert ctx.trace is not None
    facts, span = ctx.trace.facts, ctx.trace.facts.span_s
    if not span:
        return
    for k in facts.kernels[:ctx.trace.top]:
        if k.share < ctx.trace.min_share:
            break
        limit = "unbounded" if k.amdahl_limit is None else f"{k.amdahl_limit:.2f}x"
        yield tr.measured(ctx, f"kernel {k.name} takes {k.share:.1%} of the GPU's kernel time ({tr.fmt_us(k.total_s)} "
                          f"in {k.launches} launches, {k.span_share:.1%} of the assessed span): making it 2x faster "
                          f"speeds that span up at most {k.amdahl_2x:.2f}x, removing it {limit} (Amdahl)",
                          "work on this kernel first: see its own findings below", k.total_s,
                          (("kernel_time_s", k.total_s), ("launches", k.launches), ("share_of_kernel_time", k.share)),
                          kernel=k.name)
    if facts.busy_share < 0.8 and facts.idle_s > 1e-3:
        gaps = ", ".join(f"{tr.fmt_us(length)} at +{tr.fmt_us(start)}" for start, length in facts.gaps[:3])
        yield tr.measured(ctx, f"the GPU is idle {1 - facts.busy_share:.0%} of the assessed span ({tr.fmt_us(facts.idle_s)} "
                          f"of {tr.fmt_us(span)}); largest gaps: {gaps or 'many short ones'}",
                          "profile the host code between launches (cudalens assess hotspots); batch work into fewer, "
                          "larger launches or CUDA graphs; move host work off the critical path",
                          facts.idle_s, (("busy_share", facts.busy_share), ("idle_s", facts.idle_s)))
