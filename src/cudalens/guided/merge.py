"""Merge a static analysis with counters and measurements: the guided report.

``merge_guided`` takes the analysis JSON (``Analysis.to_dict()``, schema cudalens/analysis-1) and
returns a copy with keys added, none removed:

- ``counters``: per kernel, the guide's (nvprof-era) metrics, derived from ncu counters;
- ``cross_checks``: every static prediction a counter can verify (see :mod:`.crosscheck`);
- ``findings``: re-ranked with measured impacts, plus one V1 finding per disagreement;
- ``first_steps``: the three things to do first;
- ``speed_of_light`` (lines in words) and ``speed_of_light_details`` (the numbers), per measured kernel;
- ``roofline``: the roofline point of the measured kernel that takes the most time (or None).

These are the keys :func:`cudalens.report.html.render_html` reads.
"""

from __future__ import annotations

import copy
import statistics
from typing import Any, Mapping, Sequence

from cudalens.guided.crosscheck import cross_check, disagreement_findings
from cudalens.guided.inputs import as_ceilings, as_counters, as_measurements, finding_from_dict, finding_to_dict
from cudalens.guided.rank import first_steps, kernel_loads, rank_order
from cudalens.guided.speed_of_light import speed_of_light
from cudalens.profile.ncu import LaunchCounters, LegacyMetrics

SECTOR_BYTES = 32


def _throughput_gbps(launches: Sequence[LaunchCounters], sectors_metric: str) -> float | None:
    """Median over launches of sectors x 32 B / duration, in GB/s (the guide's "actual" throughput)."""
    values = []
    for lc in launches:
        sectors, ns = lc.metrics.get(sectors_metric), lc.metrics.get("gpu__time_duration.sum")
        if sectors is not None and ns:
            values.append(sectors * SECTOR_BYTES / (ns * 1e-9) / 1e9)
    return statistics.median(values) if values else None


def _measured_findings(report: Mapping[str, Any], loads: Mapping[str, Any]) -> list[Any]:
    """Findings only a measurement establishes (G6: memory-bound by measured DRAM throughput)."""
    from cudalens.rules.global_memory.g6_scalar_memory_access import measured_finding

    out = []
    for k in report.get("kernels", []):
        load = loads.get(k.get("name"))
        if load is None or not k.get("sass"):
            continue
        f = measured_finding(k["name"], k.get("file", ""), k.get("line"), k["sass"], load.dram_utilization)
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


def merge_guided(report: Mapping[str, Any], *, counters: Any = None, measurement: Any = None,
                 ceilings: Any = None) -> dict[str, Any]:
    """The report extended with counters, cross-checks, ranked findings, first steps, speed of light.

    ``counters``: dict kernel -> LegacyMetrics, or the LaunchCounters of ``parse_csv_file``.
    ``measurement``: a BenchResult (or its dict), a :class:`~cudalens.guided.inputs.Measurement`,
    or a sequence of them. ``ceilings``: a ``cudalens.measure.throughput.Ceilings`` (or its dict);
    when None, the measured device's theoretical ceilings are used. The input is not modified.
    """
    out = copy.deepcopy(dict(report))
    legacy, raw = as_counters(counters)
    measurements = as_measurements(measurement)
    ceil = as_ceilings(ceilings, measurements)

    out["counters"] = {name: guide_counters(m, raw.get(name, ())) for name, m in legacy.items()}
    checks = cross_check(report, legacy)
    out["cross_checks"] = [c.to_dict() for c in checks]

    originals = list(report.get("findings", []))
    loads = kernel_loads(report, legacy, measurements, ceil)
    findings = [finding_from_dict(d) for d in originals] + disagreement_findings(checks)
    findings += _measured_findings(report, loads)
    order = rank_order(findings, loads, report)
    ranked = [g for _, g in order]
    out["findings"] = [finding_to_dict(g, originals[i] if i < len(originals) else None) for i, g in order]
    out["first_steps"] = first_steps(ranked)

    sols = [speed_of_light(m, ceil, legacy.get(m.kernel)) for m in measurements]
    out["speed_of_light"] = [line for s in sols for line in s.lines]
    out["speed_of_light_details"] = [s.to_dict() for s in sols]
    points = [(s.seconds, s.roofline()) for s in sols if s.roofline() is not None]
    out["roofline"] = max(points, key=lambda p: p[0])[1] if points else None
    return out

