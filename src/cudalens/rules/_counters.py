"""The finding of a kernel's Nsight Compute counters (a traced kernel profiled once)."""

from __future__ import annotations

from typing import Any

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules.context import RuleContext


def counted(ctx: RuleContext, message: str, fix: str, waste: float | None, fact: str, value: Any) -> Finding:
    """A confirmed finding on the profiled kernel; impact: the wasted share x the kernel's span share."""
    assert ctx.counters is not None
    k = ctx.counters.summary
    return ctx.finding(None, message, fix, kernel=k.name, file=ctx.counters.program,
                       impact=None if waste is None else waste * k.span_share,
                       impact_text="wasted share x the kernel's span share",
                       evidence=(Evidence(Layer.PROFILER, fact, value),), status="confirmed")
