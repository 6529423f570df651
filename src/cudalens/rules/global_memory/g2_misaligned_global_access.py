"""G2: Aligned sequential accesses."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._access import accesses, excess, notes_text, sector_evidence, sectors_text, share, waste
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule(
    "G2",
    name="misaligned-global-access",
    layers="S M P L",
    measured="coalescing",
    verified_by=("global load sectors/request", "global store sectors/request"),
)
def misaligned_global_access(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Flags a sequential (unit-stride) global access whose warp span starts off a 32-byte boundary, so it
    touches one sector more than needed (5 instead of 4 for 4-byte words).

    Why it matters
    Each warp pays an extra sector; for a copy with an offset that is 25 % more traffic for 4-byte words.
    Arrays from cudaMalloc are 256-byte aligned, so the offset comes from the index.

    Example
    ``out[i] = in[i + 1];`` (a shifted read).

    Fix
    Keep warp spans aligned: pad the row or the offset to a multiple of 32 bytes, or load the aligned
    span and shift in registers or shared memory.
    """
    for k, a in accesses(ctx, "global"):
        if excess(a) and a.pattern == "misaligned":
            yield ctx.finding(
                a.line,
                f"global {a.op} of {a.array}[{a.index}] is sequential but misaligned: "
                f"{sectors_text(a)} sectors per request instead of {a.ideal_sectors_per_request:g}{notes_text(a)}",
                "align each warp's span to 32 bytes (pad offsets or row widths to a multiple of 32 bytes)",
                kernel=k.name,
                file=a.file or k.file,
                impact=share(waste(a)),
                impact_text="share of fetched bytes wasted",
                evidence=sector_evidence(a, k),
            )
