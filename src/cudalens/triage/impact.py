"""How much a finding costs: its rule's cost share weighted by how often its line runs.

A rule gives ``Finding.impact``, the share of a resource the flagged code wastes (sectors fetched
and not used, shared-memory wavefronts lost to conflicts, occupancy lost, constant reads
serialized, lanes idle). That share says nothing of how often the code runs: a 97 % waste in an
inner loop costs far more than in a once-per-thread epilogue. :func:`runs_per_thread` estimates
how many times one thread executes a line from the loops that enclose it, multiplying their trip
counts (:func:`cudalens.source.trips.loop_trips`: literal bounds, ``#define``d constants, scalar
parameters whose launch passes a known value, the compiled run's count, else a range, an input
range or a trial one, ranked at its geometric middle and named in the evidence); a grid-stride loop
counts once (each thread handles about one element of a grid sized to the data). ``Finding.score``
= impact x runs ranks findings within one priority.

Where the guide gives no priority ("-" in the catalog), the priority the cost earns is the rules'
judgement (:func:`cudalens.rules.priority.derived_priority`); this module applies it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from cudalens.findings import Evidence, Finding, Layer
from cudalens.rules.priority import derived_priority
from cudalens.source.trips import Trips, trips_of_kernel
from cudalens.triage.speedup import estimate_speedups


def runs_per_thread(kernel: Any, line: int | None, trips_of: Any = None) -> tuple[float, list[str]]:
    """Estimated executions of ``line`` by one thread of ``kernel``, with how each loop's count was
    had (``trips_of``: loop -> :class:`~cudalens.source.trips.Trips`, default :func:`~cudalens.source.trips.trips_of_kernel`)."""
    if line is None or kernel is None:
        return 1.0, []
    trips_of = trips_of or trips_of_kernel(kernel)
    runs, how = 1.0, []
    for lp in getattr(kernel, "loops", ()):
        if lp.line <= line <= lp.end_line and not (lp.line == line and lp.line == kernel.line):
            t: Trips = trips_of(lp)
            runs *= t.value
            how.append(f"loop at line {lp.line}: {t.describe()}")
    return runs, how


def estimate(findings: Iterable[Finding], model: Any, compiled: Mapping[str, Any] | None = None,
             cc: str = "9.0") -> list[Finding]:
    """Each finding with ``runs`` (from the kernel's loops), its estimated speedup
    (:mod:`cudalens.triage.speedup`) and, for catalog items without a guide priority, the priority
    its cost earns. Host-code findings run once."""
    kernels = {(k.name, k.file): k for k in getattr(model, "kernels", ())}
    trips = {k.name: trips_of_kernel(k, model) for k in getattr(model, "kernels", ())}
    out = []
    for f in findings:
        k = kernels.get((f.kernel, f.file)) if f.kernel else None
        g = f
        if f.runs is None:
            runs, how = runs_per_thread(k, f.line, trips.get(k.name) if k is not None else None)
            ev = tuple(Evidence(Layer.SOURCE, "runs_per_thread", h) for h in how)
            g = dataclasses.replace(f, runs=runs, evidence=f.evidence + ev)
        kernel_wide = k is not None and g.line == k.line
        pri = derived_priority(g, kernel_wide)
        if pri != g.priority:
            g = dataclasses.replace(g, priority=pri, evidence=g.evidence + (
                Evidence(Layer.MODEL, "priority_from_cost", {"cost": g.impact, "runs_per_thread": g.runs}),))
        out.append(g)
    return estimate_speedups(out, model, lambda k, line: runs_per_thread(k, line, trips.get(k.name))[0],
                             compiled, cc, trips)
