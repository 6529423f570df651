"""K1: Constant memory read by few distinct addresses per warp."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._access import accesses, share
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("K1", name="divergent-constant-addresses", layers="S M")
def divergent_constant_addresses(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Flags a ``__constant__`` read where the lanes of a warp read different addresses.

    Why it matters
    The constant cache serves one address per warp per cycle: reads of n distinct addresses are
    serialized into n requests. Constant memory pays off only when a warp reads one value.

    Example
    ``coef[threadIdx.x]`` on ``__constant__ float coef[256]``.

    Fix
    Index constant memory with warp-uniform values (loop counters, blockIdx); for per-thread lookups
    use global memory with ``const __restrict__`` (read-only cache) or shared memory.
    """
    for k, a in accesses(ctx, "constant"):
        d = a.distinct_addresses
        if d is not None and d > 1 + 1e-9:
            yield ctx.finding(
                a.line,
                f"constant read {a.array}[{a.index}] reads {d:g} distinct addresses per warp (serialized)",
                "index __constant__ memory with warp-uniform values; use global/shared memory for per-thread tables",
                kernel=k.name,
                file=a.file or k.file,
                impact=share(1.0 - 1.0 / d),
                impact_text="share of constant-cache cycles serialized",
                evidence=[Evidence(Layer.MODEL, "distinct_addresses", d)],
            )
