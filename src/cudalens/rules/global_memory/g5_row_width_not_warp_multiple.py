"""G5: Two-dimensional arrays with warp-multiple widths or pitched allocation."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._access import accesses, sector_evidence
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("G5", name="row-width-not-warp-multiple", layers="S M", measured="coalescing")
def row_width_not_warp_multiple(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    For a 2-D block indexing ``base + width * ty + tx``, flags a row width whose rows do not start on a
    128-byte boundary (width in elements not a multiple of 32 for 4-byte words).

    Why it matters
    Every row after the first starts misaligned, so warps that cover a row segment touch an extra
    sector, and 2-D blocks lose coalescing row by row.

    Example
    ``float v = img[y * 1000 + x];`` for a 1000-float wide image.

    Fix
    Allocate with ``cudaMallocPitch`` (or pad the width to a multiple of 32 elements) and index rows
    with the pitch.
    """
    for k, a in accesses(ctx, "global"):
        pitch = getattr(a, "row_pitch", None)
        bdx = k.block_dims[0] if k.block_dims else None
        if pitch and a.bytes_per_thread and bdx and abs(pitch) > bdx and (abs(pitch) * a.bytes_per_thread) % 128:
            yield ctx.finding(
                a.line,
                f"rows of {a.array} are {pitch} elements wide ({pitch * a.bytes_per_thread} bytes), "
                "not a multiple of 128 bytes: rows after the first start misaligned",
                "pad the row width to a multiple of 32 elements or allocate with cudaMallocPitch",
                kernel=k.name,
                file=a.file or k.file,
                impact=None,
                impact_text=None,
                evidence=sector_evidence(a, k) + [Evidence(Layer.MODEL, "row_pitch", pitch)],
            )
