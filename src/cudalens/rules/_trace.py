"""What the traced detectors share: where a record falls in the traced run, and the finding of a
measured cost (impact: the cost's share of the assessed span)."""

from __future__ import annotations

from typing import Any

from cudalens.findings import Finding, Layer
from cudalens.rules.context import Fact, RuleContext

#: a host-device copy smaller than this pays mostly the fixed cost of a transfer (X2)
SMALL_COPY = 64 * 1024
#: copies of one size between launches at least this often are an iteration's traffic (X1, X4, M1)
REPEAT = 3
#: repeated copies below this in total and below 1 % of the span are not X1 (see X4 instead)
X1_MIN_BYTES = 256 * 1024


def measured(ctx: RuleContext, message: str, fix: str, cost_s: float, facts: tuple[Fact, ...],
             kernel: str | None = None) -> Finding:
    """A confirmed finding of the traced program whose impact is ``cost_s`` over the assessed span."""
    assert ctx.trace is not None
    span_s = ctx.trace.facts.span_s
    impact = min(cost_s / span_s, 1.0) if span_s > 0 else None
    return ctx.finding(None, message, fix, kernel=kernel, file=ctx.trace.program, layer=Layer.RUNTIME,
                       facts=facts, impact=impact, impact_text="of the assessed span (measured)", status="confirmed")


def between_launches(trace: Any, times: list[int]) -> int:
    """How many of ``times`` fall between two kernel launches (i.e. inside the launching phase)."""
    if not trace.kernels:
        return 0
    lo, hi = trace.kernels[0].start_ns, trace.kernels[-1].end_ns
    return sum(1 for t in times if lo <= t <= hi)


def throughout(trace: Any, times: list[int]) -> bool:
    """True when ``times`` fall in each third of the kernel phase: a steady loop, not a warm-up."""
    lo, hi = trace.kernels[0].start_ns, trace.kernels[-1].end_ns
    third = (hi - lo) / 3 or 1
    return {min(int((t - lo) / third), 2) for t in times if lo <= t <= hi} == {0, 1, 2}


def link_text(facts: Any) -> str:
    """The link and its per-direction rate, in parentheses, where the trace knows them; else ""."""
    link = facts.link_gbps
    return f" ({facts.link}: {link:.1f} GB/s per direction)" if link and facts.link else ""


def host_device(trace: Any) -> list[Any]:
    return [c for c in trace.copies if c.host_side is not None]


def fmt_bytes(b: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= size:
            return f"{b / size:.2f} {unit}"
    return f"{b:.0f} B"


def fmt_us(s: float) -> str:
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"
