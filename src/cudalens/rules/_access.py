"""Helpers of the rules that read the warp access model's verdicts (G1-G8, SH1-SH3, K1, D1)."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Evidence, Layer
from cudalens.rules.context import RuleContext
from cudalens.source.model import Access, Kernel


def kernels(ctx: RuleContext) -> Iterator[Kernel]:
    return iter(ctx.source.kernels)


def accesses(ctx: RuleContext, space: str) -> Iterator[tuple[Kernel, Access]]:
    """(kernel, access) pairs, one per (line, array, op) so a repeated subscript reports once."""
    for k in kernels(ctx):
        seen = set()
        for a in k.accesses:
            key = (a.file, a.line, a.array, a.op, a.index)
            if a.space == space and key not in seen:
                seen.add(key)
                yield k, a


def figures_layer(a: Access) -> Layer:
    """The layer that gave ``a``'s figures: the access model on the source, or on the compiled code
    where the source model had none (the join fills those: evidence.compiled_figures)."""
    return Layer.MODEL if a.figures_from == "source" else Layer.COMPILED


def figures_evidence(a: Access) -> list[Evidence]:
    """Evidence naming the compiled layer when it gave ``a``'s figures (empty otherwise)."""
    return [] if a.figures_from == "source" else [Evidence(Layer.COMPILED, "figures_from", a.figures_from)]


def sector_evidence(a: Access, k: Kernel) -> list[Evidence]:
    layer = figures_layer(a)
    ev = [Evidence(layer, "sectors_per_request", a.sectors_per_request),
          Evidence(layer, "ideal_sectors_per_request", a.ideal_sectors_per_request),
          Evidence(Layer.MODEL, "block", k.block_dims), Evidence(Layer.SOURCE, "index", a.index),
          *figures_evidence(a)]
    ev.extend(Evidence(Layer.MODEL, "assumption", s) for s in a.assumptions)
    return ev


def waste(a: Access) -> float | None:
    if not a.sectors_per_request or a.ideal_sectors_per_request is None:
        return None
    return 1.0 - a.ideal_sectors_per_request / a.sectors_per_request


def excess(a: Access) -> bool:
    return (a.sectors_per_request is not None and a.ideal_sectors_per_request is not None
            and a.sectors_per_request > a.ideal_sectors_per_request + 1e-9)


def share(impact: float | None) -> float | None:
    """An impact clamped to [0, 1] and rounded to 4 places."""
    return None if impact is None else round(max(0.0, min(1.0, impact)), 4)


def sectors_text(a: Access) -> str:
    """The sectors per request of ``a`` as printed: one number, or ``low-high`` where the figure is a
    range over parameter trials that is a finding at every value of it."""
    if a.sectors_low is not None and a.sectors_per_request is not None and a.sectors_low < a.sectors_per_request:
        return f"{a.sectors_low:g}-{a.sectors_per_request:g}"
    return f"{a.sectors_per_request:g}"


def stride_text(a: Access) -> str:
    """The lane stride as printed: ``4 elements``, or, where it depends on a parameter nobody gave,
    ``= height elements (height = 256..4096 tried)`` (a trial value is never printed as a fact)."""
    return a.lane_stride_text or f"{a.lane_stride} elements"


def notes_text(a: Access) -> str:
    """What a message about ``a``'s figures must add (edge warps, the trials they hold for), or ""."""
    return "".join(f" ({n})" for n in a.figure_notes)
