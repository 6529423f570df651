"""G3: Unit-stride accesses."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._access import (
    accesses,
    excess,
    notes_text,
    sector_evidence,
    sectors_text,
    share,
    stride_text,
    waste,
)
from cudalens.rules._patterns import swap_fix
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule(
    "G3",
    name="strided-global-access",
    layers="S M P L",
    measured="coalescing",
    verified_by=("global load sectors/request", "global store sectors/request"),
)
def strided_global_access(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Flags a global access whose consecutive lanes are ``k > 1`` elements apart.

    Why it matters
    With stride k only 1/k of every fetched sector is used, until each lane needs its own sector
    (32 sectors per request). A column walk over a row-major matrix is the usual cause.

    Example
    ``out[i] = in[i * stride];`` or ``a[threadIdx.x * N + k]``.

    Fix
    Swap the roles of the indices so threadIdx.x walks the contiguous dimension, store the data
    transposed, or load a tile coalesced into shared memory and read it strided from there.

    Nor is a group of accesses of one statement whose strided lanes fill each other's gaps
    (``out[3*x+0]``, ``out[3*x+1]``, ``out[3*x+2]``; ``s[2*t]`` and ``s[2*t+1]``): together they
    move the bytes they need.

    An access whose index has unit stride over all lanes but sits in a divergent branch (the gaps
    are the branch's idle lanes, ``if (threadIdx.x % 2 == 0) out[i] = ...``) is not reported here:
    its cost is the divergence, which D1 reports.

    Where the block as a whole reads a dense tile that shared memory could serve coalesced, SH3
    reports the access instead, at this rule's priority (SH3 supersedes G3): the guide points to shared memory as the
    way out of strided access (BPG 9.2.1.4) and works it through in 9.2.3.3.
    """
    for k, a in accesses(ctx, "global"):
        if (excess(a) and a.pattern and a.pattern.startswith("strided-") and not a.stride_from_mask
                and not a.covered_by_siblings):
            yield ctx.finding(
                a.line,
                f"global {a.op} of {a.array}[{a.index}] has lane stride {stride_text(a)}: "
                f"{sectors_text(a)} sectors per request instead of {a.ideal_sectors_per_request:g}{notes_text(a)}",
                swap_fix(k, a, ctx.source) or (
                    "let threadIdx.x index the contiguous dimension, or stage a tile in shared memory"),
                kernel=k.name,
                file=a.file or k.file,
                impact=share(waste(a)),
                impact_text="share of fetched bytes wasted",
                evidence=sector_evidence(a, k),
            )
