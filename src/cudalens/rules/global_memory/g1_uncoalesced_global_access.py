"""G1: Coalesced global memory accesses."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._access import accesses, excess, notes_text, sector_evidence, sectors_text, share, waste
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule(
    "G1",
    name="uncoalesced-global-access",
    layers="S M P L",
    measured="coalescing",
    verified_by="global sectors per request (ncu l1tex__t_sectors / l1tex__t_requests, global ld/st)",
)
def uncoalesced_global_access(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Flags a global load or store whose warp touches more 32-byte sectors than the access needs, when
    the lanes follow no simple stride (scattered or row-crossing addresses). Misaligned and strided
    accesses have their own rules (G2, G3).

    Why it matters
    Global memory is moved in 32-byte sectors. A warp whose 32 lanes read 4-byte words that lie in
    4 consecutive sectors costs 4 transactions; the same 128 bytes spread over 32 sectors cost 32,
    so most of the bandwidth carries bytes no thread asked for.

    Example
    ``out[threadIdx.x * 33 % 32 + blockIdx.x * 1000] = ...`` with an index that jumps around.

    Fix
    Make consecutive threads (``threadIdx.x``) touch consecutive addresses; if the algorithm needs
    another order, stage the data through shared memory and re-order it there.
    """
    for k, a in accesses(ctx, "global"):
        if excess(a) and a.pattern in ("uncoalesced", "coalesced") and not a.covered_by_siblings:
            w = waste(a)
            yield ctx.finding(
                a.line,
                f"global {a.op} of {a.array}[{a.index}] touches {sectors_text(a)} sectors per warp "
                f"request where {a.ideal_sectors_per_request:g} would do{notes_text(a)}",
                "make threadIdx.x the fastest-varying part of the index so a warp reads one contiguous "
                "span, or re-order through shared memory",
                kernel=k.name,
                file=k.file,
                impact=share(w),
                impact_text="share of fetched bytes wasted",
                evidence=sector_evidence(a, k),
            )
