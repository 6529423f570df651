"""Merge the analysis's records with counters and measurements: the guided report.

``merge_guided`` takes the pipeline's kernel records (:class:`~cudalens.evidence.join.KernelRecord`:
the source model's accesses and branches with the compiled facts joined to them) and the findings,
and returns the keys the guided report adds to the ``cudalens/analysis-1`` JSON:

- ``counters``: per kernel, the guide's (nvprof-era) metrics, derived from ncu counters;
- ``cross_checks``: every static prediction a counter can verify (see :mod:`.crosscheck`);
- ``findings``: re-ranked with measured impacts, plus one V1 finding per disagreement (serialized);
- ``first_steps``: the three things to do first;
- ``speed_of_light`` (lines in words) and ``speed_of_light_details`` (the numbers), per measured kernel;
- ``roofline``: the roofline point of the measured kernel that takes the most time (or None).

These are the keys :func:`cudalens.report.html.render_html` reads, beside the analysis JSON's.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from cudalens.findings import Finding
from cudalens.guided.crosscheck import CrossCheck, cross_check, disagreement_findings
from cudalens.guided.inputs import as_ceilings, as_counters, as_measurements, finding_to_dict
from cudalens.guided.rank import first_steps, kernel_loads, rank_order
from cudalens.guided.speed_of_light import SpeedOfLight, speed_of_light
from cudalens.profile.ncu import LaunchCounters, LegacyMetrics

if TYPE_CHECKING:
    from cudalens.evidence.join import KernelRecord
    from cudalens.guided.rank import KernelLoad

SECTOR_BYTES = 32


def _throughput_gbps(launches: Sequence[LaunchCounters], sectors_metric: str) -> float | None:
    """Median over launches of sectors x 32 B / duration, in GB/s (the guide's "actual" throughput)."""
    values = []
    for lc in launches:
        sectors, ns = lc.metrics.get(sectors_metric), lc.metrics.get("gpu__time_duration.sum")
        if sectors is not None and ns:
            values.append(sectors * SECTOR_BYTES / (ns * 1e-9) / 1e9)
    return statistics.median(values) if values else None


def _measured_findings(records: Sequence[KernelRecord], loads: dict[str, KernelLoad]) -> list[Finding]:
    """Findings only a measurement establishes (G6: memory-bound by measured DRAM throughput)."""
    from cudalens.rules.global_memory.g6_scalar_memory_access import measured_finding

    out = []
    for r in records:
        load = loads.get(r.name)
        if load is None or not r.sass:
            continue
        f = measured_finding(r.name, r.kernel.file, r.kernel.line, dict(r.sass), load.dram_utilization)
        if f is not None:
            out.append(f)
    return out


def guide_counters(m: LegacyMetrics, launches: Sequence[LaunchCounters] = ()) -> dict[str, Any]:
    """One kernel's counters in the guide's vocabulary (BPG 8.2.3 and the nvprof metric names).

    Efficiencies are percent (requested bytes / transferred bytes); occupancies are fractions;
    throughputs GB/s (10^9 B/s). Requested vs actual global throughput needs the raw launches:
    actual = L1 sectors x 32 B / time, requested = actual x efficiency.
    """
    out: dict[str, Any] = {
        "launches": m.launches,
        "duration_s": m.duration_s,
        "gld_efficiency": m.gld_efficiency,
        "gst_efficiency": m.gst_efficiency,
        "branch_efficiency": m.branch_efficiency,
        "warp_execution_efficiency": m.warp_execution_efficiency,
        "achieved_occupancy": m.achieved_occupancy,
        "theoretical_occupancy": m.theoretical_occupancy,
        "dram_throughput_gbps": m.dram_bandwidth_gbps,
        "l1_hit_rate": m.l1_hit_rate,
        "l2_hit_rate": m.l2_hit_rate,
    }
    for kind, metric, eff in (("gld", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", m.gld_efficiency),
                              ("gst", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", m.gst_efficiency)):
        actual = _throughput_gbps(launches, metric)
        out[f"{kind}_throughput_gbps"] = actual
        out[f"{kind}_requested_throughput_gbps"] = None if actual is None or eff is None else actual * eff / 100.0
    return out


@dataclass(frozen=True)
class Guided:
    """The guided analysis, typed: what :func:`merge_guided` serializes.

    ``findings`` are ranked (measured impacts, V1 per disagreement, measured findings added);
    ``finding_records`` are their JSON, each keeping the keys its original finding's had."""

    counters: Mapping[str, Mapping[str, Any]]
    cross_checks: tuple[CrossCheck, ...]
    findings: tuple[Finding, ...]
    finding_records: tuple[Mapping[str, Any], ...]
    first_steps: tuple[str, ...]
    speed_of_light: tuple[SpeedOfLight, ...]

    @property
    def roofline(self) -> dict[str, Any] | None:
        """The roofline point of the measured kernel that takes the most time (or None)."""
        points = [(s.seconds, s.roofline()) for s in self.speed_of_light if s.roofline() is not None]
        return max(points, key=lambda p: p[0])[1] if points else None

    def to_dict(self) -> dict[str, Any]:
        return {"counters": {k: dict(v) for k, v in self.counters.items()},
                "cross_checks": [c.to_dict() for c in self.cross_checks],
                "findings": [dict(d) for d in self.finding_records],
                "first_steps": list(self.first_steps),
                "speed_of_light": [line for s in self.speed_of_light for line in s.lines],
                "speed_of_light_details": [s.to_dict() for s in self.speed_of_light],
                "roofline": self.roofline}


def merge_guided(records: Sequence[KernelRecord], findings: Sequence[Finding], *, counters: Any = None,
                 measurement: Any = None, ceilings: Any = None) -> dict[str, Any]:
    """The guided keys (:meth:`Guided.to_dict`) of :func:`guide`."""
    return guide(records, findings, counters=counters, measurement=measurement, ceilings=ceilings).to_dict()


def guide(records: Sequence[KernelRecord], findings: Sequence[Finding], *, counters: Any = None,
          measurement: Any = None, ceilings: Any = None) -> Guided:
    """The guided analysis of the kernel ``records`` and their ``findings``: counters, cross-checks,
    ranked findings, first steps, speed of light, roofline.

    ``counters``: dict kernel -> LegacyMetrics, or the LaunchCounters of ``parse_csv_file``.
    ``measurement``: a BenchResult (or its dict), a :class:`~cudalens.guided.inputs.Measurement`,
    or a sequence of them. ``ceilings``: a ``cudalens.measure.throughput.Ceilings`` (or its dict);
    when None, the measured device's theoretical ceilings are used.
    """
    legacy, raw = as_counters(counters)
    measurements = as_measurements(measurement)
    ceil = as_ceilings(ceilings, measurements)
    checks = cross_check(records, legacy)
    originals = list(findings)
    loads = kernel_loads(records, legacy, measurements, ceil)
    every = originals + disagreement_findings(checks) + _measured_findings(records, loads)
    order = rank_order(every, loads, records)
    ranked = [g for _, g in order]
    return Guided(
        counters={name: guide_counters(m, raw.get(name, ())) for name, m in legacy.items()},
        cross_checks=tuple(checks),
        findings=tuple(ranked),
        finding_records=tuple(finding_to_dict(g, originals[i].to_dict() if i < len(originals) else None)
                              for i, g in order),
        first_steps=tuple(first_steps(ranked)),
        speed_of_light=tuple(speed_of_light(m, ceil, legacy.get(m.kernel)) for m in measurements))
