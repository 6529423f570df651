"""D1: Warp-uniform branch conditions."""

from __future__ import annotations

import dataclasses
from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer, Priority
from cudalens.rules._access import kernels, share
from cudalens.rules._counters import counted
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule

#: A branch splitting at most this share of the representative blocks' warps is an edge guard.
EDGE_SHARE = 0.125


@rule(
    "D1",
    name="divergent-branch",
    layers="S M P L",
    verified_by="branch efficiency (ncu smsp__sass_average_branch_targets_threads_uniform.pct)",
)
def divergent_branch(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Evaluates a branch condition for the 32 lanes of each warp of the representative block and flags
    it when some warp has lanes on both sides.

    Why it matters
    A warp executes both sides of a split branch one after the other with part of its lanes idle, so
    the divergent region runs at a fraction of the warp's throughput.

    Example
    ``if (threadIdx.x % 2 == 0) a(); else b();`` splits every warp in two.

    A single-lane guard (``if (tid == 0)``, ``if (lane == 0)`` after a warp reduction) is reported at
    info for what it costs: one lane works while the other 31 lanes of its warp wait, once. It is
    not a divergence problem worth changing the code for. So is an edge guard that splits at most
    1 in 8 warps of the representative blocks (``if (i < 8 || i >= n - 8) return;``).

    Fix
    Make the condition uniform per warp, e.g. ``if ((threadIdx.x / warpSize) % 2 == 0)``, or re-map
    work so threads that take the same side are in the same warps.
    """
    for k in kernels(ctx):
        for b in k.branches:
            if not b.divergent:
                continue
            warp_share = (b.divergent_warps / b.warps) if b.warps and b.divergent_warps is not None else None
            evidence = [Evidence(Layer.MODEL, "divergent_warps", b.divergent_warps),
                        Evidence(Layer.MODEL, "block", k.block_dims)]
            if b.lanes_taken == 1:
                # `if (tid == 0)`, `if (lane == 0)`: one lane runs a short body while its warp's other
                # lanes wait once; the guide's own reductions end this way. Report the cost, at info.
                yield dataclasses.replace(ctx.finding(
                    b.line,
                    f"single-lane guard `{b.condition}`: one lane of {b.divergent_warps} of {b.warps} warps runs "
                    "its body while the other 31 lanes of that warp wait (once per execution)",
                    "nothing to change unless the guarded body is long; then spread its work over the warp",
                    kernel=k.name, file=k.file,
                    impact=share(warp_share / 32 if warp_share is not None else None),
                    impact_text="share of the block's lane slots idle while the guarded body runs",
                    evidence=evidence + [Evidence(Layer.MODEL, "lanes_taken", 1)],
                ), priority=Priority.INFO)
                continue
            if warp_share is not None and warp_share <= EDGE_SHARE:
                # a bounds or edge guard (`if (i < 8 || i >= n - 8) return;`): a few warps at the
                # edge of the data split once; the rest run uniformly
                yield dataclasses.replace(ctx.finding(
                    b.line,
                    f"branch `{b.condition}` splits only {b.divergent_warps} of {b.warps} warps of the representative "
                    "blocks (an edge or bounds guard): the other warps take it uniformly",
                    "nothing to change unless the split warps do long work; then align the edge to warp boundaries",
                    kernel=k.name, file=k.file, impact=share(warp_share),
                    impact_text="share of warps that diverge", evidence=evidence,
                ), priority=Priority.INFO)
                continue
            yield ctx.finding(
                b.line,
                f"branch `{b.condition}` splits {b.divergent_warps} of {b.warps} warps (representative blocks)",
                "make the condition uniform across each warp, e.g. depend on threadIdx.x / 32",
                kernel=k.name,
                file=k.file,
                impact=share(warp_share),
                impact_text="share of warps that diverge",
                evidence=evidence,
            )


@rule("D1", name="divergent-branch", layers="P", requires=("counters",))
def low_branch_efficiency(ctx: RuleContext) -> Iterator[Finding]:
    """Branch efficiency under 90 % in a profiled launch (Nsight Compute)."""
    assert ctx.counters is not None
    m = ctx.counters.metrics
    if m.branch_efficiency is not None and m.branch_efficiency < 90:
        yield counted(ctx, f"branch efficiency {m.branch_efficiency:.0f}% (divergent branches)",
                      "make branch conditions uniform across each warp", 1 - m.branch_efficiency / 100,
                      "branch efficiency (%)", m.branch_efficiency)
