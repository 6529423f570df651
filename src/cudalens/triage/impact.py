"""How much a finding costs: its rule's cost share weighted by how often its line runs.

A rule gives ``Finding.impact``, the share of a resource the flagged code wastes (sectors fetched
and not used, shared-memory wavefronts lost to conflicts, occupancy lost, constant reads
serialized, lanes idle). That share says nothing of how often the code runs: a 97 % waste in an
inner loop costs far more than in a once-per-thread epilogue. :func:`runs_per_thread` estimates
how many times one thread executes a line from the loops that enclose it, multiplying their trip
counts where the source states them (literal bounds, ``#define``d constants) and assuming
:data:`UNKNOWN_TRIPS` where it does not; a grid-stride loop counts once (each thread handles about
one element of a grid sized to the data). ``Finding.score`` = impact x runs ranks findings within
one priority.

Where the guide gives no priority ("-" in the catalog), :func:`derived_priority` turns the cost
into one (never lower than the rule gave: SH3 carries G3's priority where it supersedes G3), so a
32-way bank conflict in a loop ranks above a medium-low loop-counter nit and ``--fail-on`` can
reach it: a cost of at least 50 % in code that runs repeatedly (or kernel-wide,
such as occupancy) is medium, at least 25 % is low, the rest stays info. The guide's own
priorities are never changed.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterable, Mapping

from cudalens.findings import Evidence, Finding, Layer, Priority, is_advisory
from cudalens.rules.catalog import CATALOG

#: Trips assumed for a loop whose count the source does not state.
UNKNOWN_TRIPS = 16.0
MEDIUM_COST = 0.5
LOW_COST = 0.25

_INT = re.compile(r"^\(?\s*(-?\d+)[uUlL]*\s*\)?$")
_COND = re.compile(r"^\s*(\w+)\s*(<=|<|>=|>|!=)\s*(.+?)\s*$")
_STEP_ADD = re.compile(r"^\s*(?:\+\+\s*(\w+)|(\w+)\s*\+\+|(\w+)\s*\+=\s*(.+)|(\w+)\s*=\s*\2?\s*(\w+)\s*\+\s*(.+))\s*$")
_STEP_SUB = re.compile(r"^\s*(?:--\s*(\w+)|(\w+)\s*--|(\w+)\s*-=\s*(.+))\s*$")
_STEP_MUL = re.compile(r"^\s*(\w+)\s*(?:\*=\s*2|<<=\s*1)\s*$")
_STEP_DIV = re.compile(r"^\s*(\w+)\s*(?:/=\s*2|>>=\s*1)\s*$")


def _value(text: str | None, defines: Mapping[str, str]) -> int | None:
    if text is None:
        return None
    t = text.strip()
    for _ in range(4):  # follow #define chains a few steps
        m = _INT.match(t)
        if m:
            return int(m.group(1))
        if t in defines:
            t = str(defines[t]).strip()
            continue
        return None
    return None


def trip_count(loop: Any, defines: Mapping[str, str] | None = None) -> tuple[float, str]:
    """(trips, how it was established): "literal", "grid-stride", or "assumed"."""
    defines = defines or {}
    step = (loop.step or "").replace(" ", "")
    if "gridDim" in step:
        return 1.0, "grid-stride"
    cond = _COND.match(loop.condition or "")
    start = _value(_start_value(loop.start), defines)
    if cond and start is not None:
        bound = _value(cond.group(3), defines)
        op = cond.group(2)
        if bound is not None:
            amount = _value(loop.step, defines)  # the model gives an additive step as its amount
            if (amount or _STEP_ADD.match(loop.step or "")) and op in ("<", "<=", "!="):
                inc = amount or _increment(loop.step or "", defines)
                if inc:
                    span = bound - start + (1 if op == "<=" else 0)
                    return float(max(0, -(-span // inc))), "literal"
            if amount is not None and amount < 0 and op in (">", ">="):
                return float(max(0, -(-(start - bound + (1 if op == ">=" else 0)) // -amount))), "literal"
            if _STEP_SUB.match(loop.step or "") and op in (">", ">="):
                span = start - bound + (1 if op == ">=" else 0)
                return float(max(0, span)), "literal"
            if _STEP_DIV.match(loop.step or "") and op in (">", ">=", "!=") and start > 0:
                return float(max(1, start.bit_length() - max(bound, 0).bit_length() + (1 if op == ">=" else 0))), "literal"
            if _STEP_MUL.match(loop.step or "") and op in ("<", "<=") and start > 0:
                return float(max(1, (bound // start).bit_length())), "literal"
    return UNKNOWN_TRIPS, "assumed"


def _start_value(start: str | None) -> str | None:
    if start is None:
        return None
    return start.split("=")[-1].strip() if "=" in start else start.strip()


def _increment(step: str, defines: Mapping[str, str]) -> int | None:
    m = _STEP_ADD.match(step)
    if not m:
        return None
    if m.group(1) or m.group(2):
        return 1
    amount = m.group(4) or m.group(7)
    return _value(amount, defines)


def runs_per_thread(kernel: Any, line: int | None, defines: Mapping[str, str] | None = None) -> tuple[float, list[str]]:
    """Estimated executions of ``line`` by one thread of ``kernel``, with how each loop's count was had."""
    if line is None or kernel is None:
        return 1.0, []
    runs, how = 1.0, []
    for lp in getattr(kernel, "loops", ()):
        if lp.line <= line <= lp.end_line and not (lp.line == line and lp.line == kernel.line):
            trips, basis = trip_count(lp, defines)
            runs *= trips
            how.append(f"loop at line {lp.line}: {trips:g} trips ({basis})")
    return runs, how


def derived_priority(f: Finding, kernel_wide: bool) -> Priority:
    """The priority of a finding whose catalog item has none ("-"), from its cost."""
    item = CATALOG.get(f.rule)
    if item is None or item.guide_priority != "-" or f.impact is None or is_advisory(f):
        return f.priority
    repeated = (f.runs or 1.0) > 1.0 or kernel_wide
    earned = f.priority
    if f.impact >= MEDIUM_COST and repeated:
        earned = Priority.MEDIUM
    elif f.impact >= LOW_COST:
        earned = Priority.LOW
    return min(earned, f.priority, key=lambda p: p.rank)  # never below what the rule gave


def estimate(findings: Iterable[Finding], model: Any) -> list[Finding]:
    """Each finding with ``runs`` (from the kernel's loops) and, for catalog items without a guide
    priority, the priority its cost earns. Host-code findings run once."""
    kernels = {(k.name, k.file): k for k in getattr(model, "kernels", ())}
    defines = getattr(model, "defines", None) or {}
    out = []
    for f in findings:
        k = kernels.get((f.kernel, f.file)) if f.kernel else None
        g = f
        if f.runs is None:
            runs, how = runs_per_thread(k, f.line, defines)
            ev = tuple(Evidence(Layer.SOURCE, "runs_per_thread", h) for h in how)
            g = dataclasses.replace(f, runs=runs, evidence=f.evidence + ev)
        kernel_wide = k is not None and g.line == k.line
        pri = derived_priority(g, kernel_wide)
        if pri != g.priority:
            g = dataclasses.replace(g, priority=pri, evidence=g.evidence + (
                Evidence(Layer.MODEL, "priority_from_cost", {"cost": g.impact, "runs_per_thread": g.runs}),))
        out.append(g)
    return out
