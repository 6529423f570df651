"""The evidence layers a rule may declare beyond the source (``@rule(requires=...)``), as
:class:`cudalens.rules.context.RuleContext` carries them.

Each layer is a frozen record of facts established by the layer's own stage; a rule reads them
and never computes them. The trace and cross-check records are made above ``rules/`` (the trace
and guided packages), so the fields holding them are typed by what the detectors read, not
imported from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: Layer names, as ``@rule(requires=...)`` names them. The static ones are present in every
#: analysis of a file (``source``) or when the compiler or a binary was available.
STATIC_LAYERS = frozenset({"source", "compiled", "binary"})
LAYERS = STATIC_LAYERS | {"trace", "trace_kernel", "counters", "checks"}
#: What ``analyze`` and ``check`` can run: the static layers, and the checks of ``--counters``.
ANALYSIS_LAYERS = STATIC_LAYERS | {"checks"}


@dataclass(frozen=True)
class TraceLayer:
    """A traced run of a whole program (``cudalens profile``): its records and their summary."""

    program: str  # what the findings point at (the command's program)
    records: Any  # cudalens.trace.records.Trace
    facts: Any  # cudalens.trace.assess.AppFacts (span, kernels by share, transfers, gaps)
    sm_count: int | None = None
    top: int = 5  # hotspot kernels reported
    min_share: float = 0.05  # the smallest share of kernel time a hotspot has
    read_backs: tuple[Any, ...] = ()  # cudalens.trace.readback.ReadBack, when between launches in a loop


@dataclass(frozen=True)
class TracedKernel:
    """One kernel of a traced run: its summary and the occupancy of its traced launch."""

    program: str
    summary: Any  # cudalens.trace.assess.KernelSummary
    occupancy: Mapping[str, Any] | None = None  # the calculator's figures for the traced launch
    sm_count: int | None = None


@dataclass(frozen=True)
class KernelCounters:
    """Nsight Compute counters of one launch of a traced kernel."""

    program: str
    summary: Any  # cudalens.trace.assess.KernelSummary
    metrics: Any  # cudalens.profile.ncu.LegacyMetrics


@dataclass(frozen=True)
class ChecksLayer:
    """Predictions compared with counters: per kernel (guided.crosscheck.CrossCheck) and per line
    (profile.ncu_source.LineCheck)."""

    kernels: tuple[Any, ...] = ()
    lines: tuple[Any, ...] = ()
