"""D1: Warp-uniform branch conditions."""

from __future__ import annotations

import dataclasses
import re
from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer, Priority
from cudalens.rules._access import kernels, share
from cudalens.rules._counters import counted
from cudalens.rules._patterns import SEQUENTIAL, modulo_tree
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.model import Kernel, Loop
from cudalens.source.trips import trips_of_kernel

#: A branch splitting at most this share of the representative blocks' warps is an edge guard.
EDGE_SHARE = 0.125


@rule(
    "D1",
    name="divergent-branch",
    layers="S M P L",
    verified_by="branch efficiency",
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

    A single-lane guard whose body runs straight through (``if (lane == 0) out[w] = sum;``, a lane
    writing its warp's or block's result) is not reported: the other 31 lanes wait for one store,
    the way the guide's own reductions end. A single-lane guard around a loop (``if (i == 0) for
    (...)`` over the whole array) is reported at high, costed by what the loop runs: one lane does
    all of that work while its warp's other lanes (and every other warp) wait. An edge guard that
    splits at most 1 in 8 warps of the representative blocks (``if (i < 8 || i >= n - 8) return;``)
    is reported at info.

    Fix
    In an interleaved tree reduction (``if (tid % (2 * s) == 0)`` with ``s`` doubling), sequential
    addressing. Otherwise make the condition uniform per warp, e.g. ``if ((threadIdx.x / warpSize) % 2 == 0)``, or re-map
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
                # `if (lane == 0) out[w] = sum;`: one lane writes its warp's result, nothing to change;
                # `if (i == 0) for (...)`: one lane runs a loop while every other lane waits
                loop = guarded_loop(k, b.line)
                if loop is None:
                    continue
                trips = trips_of_kernel(k, ctx.source)(loop)
                yield dataclasses.replace(ctx.finding(
                    b.line,
                    f"single-lane guard `{b.condition}` runs the loop at line {loop.line} ({trips.describe()}) "
                    "on one lane: the other 31 lanes of its warp and the block's other warps wait for it",
                    "spread the loop's iterations over the threads (a grid-stride loop, or a block reduction)",
                    kernel=k.name, file=k.file, impact=31 / 32,
                    impact_text="share of the warp's lanes idle while one lane runs the loop",
                    evidence=evidence + [Evidence(Layer.MODEL, "lanes_taken", 1),
                                         Evidence(Layer.SOURCE, "guarded_loop", {"line": loop.line, **trips.to_dict()})],
                ), runs=trips.value)
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
                SEQUENTIAL if modulo_tree(k, b.line, b.condition) else
                "make the condition uniform across each warp, e.g. depend on threadIdx.x / 32",
                kernel=k.name,
                file=k.file,
                impact=share(warp_share),
                impact_text="share of warps that diverge",
                evidence=evidence,
            )


def guarded_loop(k: Kernel, line: int) -> Loop | None:
    """The first loop of the body of the ``if`` at ``line`` of kernel ``k`` whose condition reads a
    scalar parameter of the kernel (its trip count grows with the input); None when the body runs
    straight through or loops a fixed count (or the syntax is not at hand)."""
    if k.node is None:
        return None
    for n in syn.nodes_of(k.node, "if_statement"):
        if syn.line(n) != line:
            continue
        body = n.child_by_field_name("consequence")
        loops = syn.nodes_of(body, "for_statement", "while_statement", "do_statement") if body is not None else []
        scalars = {p.name for p in k.params if not p.is_pointer}
        for node in loops:
            lp = next((lp for lp in k.loops if lp.line == syn.line(node)), None)
            if lp is not None and scalars & set(re.findall(r"[A-Za-z_]\w*", lp.condition or "")):
                return lp
        return None
    return None


@rule("D1", name="divergent-branch", layers="P", requires=("counters",))
def low_branch_efficiency(ctx: RuleContext) -> Iterator[Finding]:
    """Branch efficiency under 90 % in a profiled launch (Nsight Compute)."""
    assert ctx.counters is not None
    m = ctx.counters.metrics
    if m.branch_efficiency is not None and m.branch_efficiency < 90:
        yield counted(ctx, f"branch efficiency {m.branch_efficiency:.0f}% (divergent branches)",
                      "make branch conditions uniform across each warp", 1 - m.branch_efficiency / 100,
                      "branch efficiency (%)", m.branch_efficiency)
