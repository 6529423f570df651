"""G6: Wide loads and stores in memory-bound kernels."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding, Layer
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule

#: G6: a measured kernel at or above this share of the DRAM bandwidth ceiling is memory-bound.
MEMORY_BOUND_DRAM_SHARE = 0.6


@rule("G6", name="scalar-memory-access", layers="C R P")
def scalar_memory_access(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Reports a kernel measured as memory-bound (DRAM throughput at 60 % or more of the device's
    bandwidth ceiling, from ``cudalens analyze --run`` or ncu counters) whose compiled global
    loads and stores are all 32 bits wide or narrower.

    Why it matters
    Each load instruction moves at most one word per thread. Wider accesses (64 or 128 bits)
    move the same bytes with a half or a quarter of the instructions, which helps kernels whose
    time is spent issuing memory operations.

    Whether a kernel is memory-bound cannot be read from its instruction mix: a static ratio of
    arithmetic to memory instructions says nothing of cache hits, latency or occupancy. Without a
    measurement cudalens does not claim it, and this rule reports nothing; run the kernel with
    ``--run`` (and ``--counters``) to have it judged.

    Example
        b[i] = a[i];                       // LDG.E / STG.E: 4 bytes per instruction

    Fix
    Use vector types when the data is suitably aligned: ``reinterpret_cast<const float4*>(a)[i]``
    (LDG.E.128), with a scalar loop for the remainder.
    """
    return iter(())  # static facts alone never establish memory-boundness: see measured_findings


def scalar_access_widths(sass_counts: dict[str, int]) -> dict[str, int] | None:
    """The kernel's global load/store instruction counts by width when every one is 32 bits or
    narrower (None when there are none, or some are wider)."""
    accesses = {c: v for c, v in sass_counts.items() if c.startswith(("ldg.", "stg."))}
    if not accesses or any(int(c.split(".")[1]) > 32 for c in accesses if c.split(".")[1].isdigit()):
        return None
    return accesses


def measured_finding(kernel: str, file: str, line: int | None, sass_counts: dict[str, int],
                     dram_share: float | None) -> Finding | None:
    """G6 for one measured kernel: memory-bound by measurement, scalar accesses in its SASS."""
    from cudalens.findings import Evidence
    from cudalens.rules.catalog import CATALOG

    widths = scalar_access_widths(sass_counts)
    if widths is None or dram_share is None or dram_share < MEMORY_BOUND_DRAM_SHARE:
        return None
    item = CATALOG["G6"]
    return Finding(
        rule="G6", priority=item.priority, section=item.section, kernel=kernel, file=file, line=line,
        message=(f"kernel {kernel} is memory-bound (measured DRAM throughput {dram_share:.0%} of the ceiling) "
                 "and every global access is 32 bits or narrower"),
        fix="load and store 8 or 16 bytes per thread (float2/float4, int4) where alignment allows",
        impact=None, impact_text=None,
        evidence=(Evidence(Layer.RUNTIME, "dram_utilization", round(dram_share, 4)),
                  Evidence(Layer.COMPILED, "global_access_widths", widths)),
    )
