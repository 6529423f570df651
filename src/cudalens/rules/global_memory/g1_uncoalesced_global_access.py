"""G1: Coalesced global memory accesses."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._access import accesses, excess, sector_evidence, share, waste
from cudalens.rules._counters import counted
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
                f"global {a.op} of {a.array}[{a.index}] touches {a.sectors_per_request:g} sectors per warp "
                f"request where {a.ideal_sectors_per_request:g} would do",
                "make threadIdx.x the fastest-varying part of the index so a warp reads one contiguous "
                "span, or re-order through shared memory",
                kernel=k.name,
                file=k.file,
                impact=share(w),
                impact_text="share of fetched bytes wasted",
                evidence=sector_evidence(a, k),
            )


def _pct(v: float | None) -> str:
    return "n/a" if not v else f"{v:.0f}%"


def _num(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1f}"


@rule("G1", name="uncoalesced-global-access", layers="P", requires=("counters",))
def low_global_efficiency(ctx: RuleContext) -> Iterator[Finding]:
    """Global load or store efficiency under 60 % in a profiled launch (Nsight Compute)."""
    assert ctx.counters is not None
    m = ctx.counters.metrics
    # 0 % is what ncu prints when no instruction of that kind was counted (e.g. loads done by LDGSTS)
    eff = [e for e in (m.gld_efficiency, m.gst_efficiency) if e]
    if eff and min(eff) < 60:
        yield counted(ctx, f"global memory efficiency {min(eff):.0f}% (Nsight Compute: load {_pct(m.gld_efficiency)}, "
                      f"store {_pct(m.gst_efficiency)}; {_num(m.global_ld_sectors_per_request)} sectors per load "
                      f"request, {_num(m.global_st_sectors_per_request)} per store request)",
                      "make consecutive threads access consecutive addresses (coalescing)", 1 - min(eff) / 100,
                      "gld/gst efficiency (%)", eff)
