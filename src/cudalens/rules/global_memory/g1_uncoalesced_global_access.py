"""G1: Coalesced global memory accesses."""

from __future__ import annotations

import re
from typing import Iterator

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules._access import accesses, excess, notes_text, sector_evidence, sectors_text, share, waste
from cudalens.rules._counters import counted
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source.model import Access


@rule(
    "G1",
    name="uncoalesced-global-access",
    layers="S M P L",
    measured="coalescing",
    verified_by=("global load sectors/request", "global store sectors/request"),
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

    An array of structs read one field at a time (``b[i].x``, ``b[i].vx`` on a 24-byte struct) is
    one finding per struct array and kernel, at its first access, listing every line: the index
    already varies fastest with threadIdx.x; the waste is the struct's other fields.

    Fix
    Make consecutive threads (``threadIdx.x``) touch consecutive addresses; if the algorithm needs
    another order, stage the data through shared memory and re-order it there. For an array of
    structs: store each field as its own array (structure of arrays), or load each element whole
    with vector loads (``float4`` members, ``__align__(16)``).
    """
    lines = ctx.source.text.splitlines()
    structs: dict[tuple[str, str], list] = {}
    for k, a in accesses(ctx, "global"):
        if excess(a) and a.pattern in ("uncoalesced", "coalesced") and not a.covered_by_siblings:
            if a.file is None and _struct_member(a, lines):
                structs.setdefault((k.name, a.array), []).append((k, a))
                continue
            w = waste(a)
            yield ctx.finding(
                a.line,
                f"global {a.op} of {a.array}[{a.index}] touches {sectors_text(a)} sectors per warp "
                f"request where {a.ideal_sectors_per_request:g} would do{notes_text(a)}",
                "make threadIdx.x the fastest-varying part of the index so a warp reads one contiguous "
                "span, or re-order through shared memory",
                kernel=k.name,
                file=a.file or k.file,
                impact=share(w),
                impact_text="share of fetched bytes wasted",
                evidence=sector_evidence(a, k),
            )
    for group in structs.values():
        k, a = max(group, key=lambda ka: waste(ka[1]) or 0.0)
        at = sorted({b.line for _, b in group})
        yield ctx.finding(
            at[0],
            f"fields of the array of structs {a.array} are accessed one at a time ({a.array}[{a.index}]. on "
            f"line{'s' if len(at) > 1 else ''} {', '.join(map(str, at))}): each warp request touches "
            f"{a.sectors_per_request:g} sectors where {a.ideal_sectors_per_request:g} would do",
            "store each field in its own array (structure of arrays), or load each element whole with vector "
            "loads (float4 members, __align__(16))",
            kernel=k.name, file=k.file, impact=share(waste(a)), impact_text="share of fetched bytes wasted",
            evidence=[*sector_evidence(a, k), Evidence(Layer.SOURCE, "struct_access_lines", at)],
        )


def _struct_member(a: Access, lines: list[str]) -> bool:
    """True when the access names a field of a struct element (``b[i].x``, ``b[i]->x``)."""
    text = lines[a.line - 1] if 0 < a.line <= len(lines) else ""
    return re.search(re.escape(f"{a.array}[") + r"[^\]]*\]\s*(\.|->)\s*[A-Za-z_]", text) is not None


def _pct(v: float | None) -> str:
    return "n/a" if not v else f"{v:.0f}%"


def _num(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1f}"


@rule("G1", name="uncoalesced-global-access", layers="P", requires=("counters",),
      spoken_for_by=("G2", "G3", "SH3"))
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
