"""Re-rank findings with what a run measured, and say what to do first.

Static analysis ranks findings by their estimated speedup (:mod:`cudalens.triage.speedup`: the
kernel's share of the time saved by the fix x the kernel's estimated share of the program's time).
A measurement adds what static analysis cannot know: which kernel takes the time, and what limits
it. The measured time share replaces the estimated one (``SpeedupEstimate.source`` "measured"), and
the order becomes:

1. downgraded findings last; then larger estimated speedup (Nsight Compute's order);
2. ties broken by guide priority (high before medium...), concrete findings before advisory ones
   (declared by each rule: ``advisory=True``);
3. then findings with a *measured* impact first, larger first;
4. then findings with only a static impact, larger first.

Measured impact, a number in [0, 1]:

- memory findings (G1 G2 G3 G5 G8 SH2 SH3): wasted DRAM bytes share x the kernel's time share.
  The waste share is 1 - gld_efficiency (or gst_efficiency, by the access's direction) from the
  counters for the coalescing rules G1/G2/G3/G5 and SH3 (a strided load staged through shared
  memory); for the re-use rules G8/SH2 (whose waste is
  redundant re-reads, invisible to efficiency counters) and when counters are absent, it is the
  finding's static impact.
- occupancy findings (E1 SH6 L2 L3): lost occupancy (1 - achieved occupancy, else theoretical)
  x the kernel's time share, but only where the kernel is latency-bound: DRAM utilization and
  compute utilization both below 60 % of their ceilings. A kernel near either ceiling gains little
  from more warps in flight: its measured impact is 0.
- everything else keeps its static impact.

The time share of a kernel is its time divided by the time of all kernels with a known time: the
measured median per launch when a measurement exists, else ncu's duration x profiled launches.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

from cudalens.findings import Evidence, Finding, Layer, is_advisory, speedup_key
from cudalens.guided.inputs import Measurement
from cudalens.measure.throughput import Ceilings
from cudalens.profile.ncu import LegacyMetrics
from cudalens.rules.registry import load_all

if TYPE_CHECKING:
    from cudalens.evidence.join import KernelRecord

#: Below this share of both ceilings a kernel counts as latency-bound.
LATENCY_BOUND_UTILIZATION = 0.6


@dataclass(frozen=True)
class KernelLoad:
    """What the measurement says about one kernel; None where it is not established."""

    kernel: str
    seconds: float | None
    time_share: float | None
    gld_waste: float | None  # 1 - gld_efficiency (fraction of loaded bytes not requested)
    gst_waste: float | None
    dram_utilization: float | None  # fraction of the DRAM bandwidth ceiling
    compute_utilization: float | None  # fraction of the FLOP/s ceiling
    occupancy: float | None  # achieved (counters) else theoretical, fraction 0..1
    occupancy_source: str = ""

    @property
    def latency_bound(self) -> bool | None:
        if self.dram_utilization is None or self.compute_utilization is None:
            return None
        return max(self.dram_utilization, self.compute_utilization) < LATENCY_BOUND_UTILIZATION


def _waste(efficiency_pct: float | None) -> float | None:
    return None if efficiency_pct is None else min(1.0, max(0.0, 1.0 - efficiency_pct / 100.0))


def kernel_loads(records: Sequence[KernelRecord], counters: Mapping[str, LegacyMetrics] | None = None,
                 measurements: Sequence[Measurement] = (), ceilings: Ceilings | None = None) -> dict[str, KernelLoad]:
    """One :class:`KernelLoad` per kernel of the records, the counters or the measurements."""
    counters = counters or {}
    measured = {}
    for m in measurements:
        measured.setdefault(m.kernel, m)
    names = list(dict.fromkeys([r.name for r in records] + list(counters) + list(measured)))
    report_occ = {r.name: (r.occupancy or {}).get("occupancy") for r in records}
    c = ceilings or Ceilings()
    peak_bw = c.theoretical_bandwidth_gbs or c.measured_bandwidth_gbs
    peak_gf = c.theoretical_gflops or c.measured_gflops
    times: dict[str, float] = {}
    for name in names:
        m, cm = measured.get(name), counters.get(name)
        if m is not None and m.seconds > 0:
            times[name] = m.seconds
        elif cm is not None and cm.duration_s:
            times[name] = cm.duration_s * cm.launches
    total = sum(times.values())
    out = {}
    for name in names:
        m, cm = measured.get(name), counters.get(name)
        dram = comp = None
        if peak_bw:
            if cm is not None and cm.dram_bandwidth_gbps is not None:
                dram = cm.dram_bandwidth_gbps / peak_bw
            elif m is not None and m.bytes > 0:
                dram = m.bytes / m.seconds / 1e9 / peak_bw
        if peak_gf:
            if cm is not None and cm.flops is not None and cm.duration_s:
                comp = cm.flops / cm.duration_s / 1e9 / peak_gf
            elif m is not None and m.flops > 0:
                comp = m.flops / m.seconds / 1e9 / peak_gf
        occ, src = None, ""
        if cm is not None and cm.achieved_occupancy is not None:
            occ, src = cm.achieved_occupancy, "achieved (ncu)"
        elif cm is not None and cm.theoretical_occupancy is not None:
            occ, src = cm.theoretical_occupancy, "theoretical (ncu)"
        elif report_occ.get(name) is not None:
            occ, src = float(report_occ[name]), "theoretical (calculator)"
        out[name] = KernelLoad(
            kernel=name, seconds=times.get(name),
            time_share=times[name] / total if name in times and total > 0 else None,
            gld_waste=_waste(cm.gld_efficiency) if cm else None, gst_waste=_waste(cm.gst_efficiency) if cm else None,
            dram_utilization=dram, compute_utilization=comp, occupancy=occ, occupancy_source=src)
    return out


def _access_ops(records: Sequence[KernelRecord], f: Finding) -> set[str]:
    ops = set()
    for r in records:
        if r.name == f.kernel and (not f.file or r.kernel.file == f.file):
            ops.update(a.op for a in r.kernel.accesses if a.line == f.line and a.space == "global")
    return ops


def measured_impact(f: Finding, load: KernelLoad | None, records: Sequence[KernelRecord] = ()) -> Finding | None:
    """``f`` with its measured impact (and the evidence for it), or None when none can be computed."""
    if load is None or load.time_share is None:
        return None
    share = Evidence(Layer.RUNTIME, "time_share", round(load.time_share, 6))
    static = Evidence(Layer.MODEL, "static_impact", f.impact)
    spec = load_all().get(f.rule)
    measured = spec.measured if spec is not None else None  # how the rule says a measurement re-ranks it
    if measured in ("memory", "coalescing"):
        waste, fact = None, None
        if measured == "coalescing":
            ops = _access_ops(records, f)
            known = [w for op, w in (("load", load.gld_waste), ("store", load.gst_waste)) if op in ops and w is not None]
            if known:
                waste, fact = sum(known) / len(known), Evidence(Layer.PROFILER, "wasted_byte_share", sum(known) / len(known))
        if waste is None and f.impact is not None:
            waste, fact = f.impact, static
        if waste is None:
            return None
        return dataclasses.replace(f, impact=waste * load.time_share,
                                   impact_text="wasted DRAM byte share x measured time share",
                                   evidence=f.evidence + (fact, share))
    if measured == "occupancy":
        bound = load.latency_bound
        if bound is None or load.occupancy is None:
            return None
        util = Evidence(Layer.RUNTIME, "dram_compute_utilization",
                        [round(load.dram_utilization, 4), round(load.compute_utilization, 4)])
        if not bound:
            return dataclasses.replace(
                f, impact=0.0, evidence=f.evidence + (static, util, share),
                impact_text="not latency-bound (DRAM or compute near its ceiling): more occupancy gains little")
        lost = max(0.0, 1.0 - load.occupancy)
        return dataclasses.replace(f, impact=lost * load.time_share,
                                   impact_text=f"lost occupancy ({load.occupancy_source}) x measured time share",
                                   evidence=f.evidence + (Evidence(Layer.PROFILER, "occupancy", load.occupancy),
                                                          util, share, static))
    return None


def measured_speedup(f: Finding, load: KernelLoad | None) -> Finding:
    """``f`` with its estimated speedup weighted by the kernel's *measured* time share instead of
    the estimated one (unchanged without an estimate or a measured share)."""
    if f.speedup is None or load is None or load.time_share is None:
        return f
    s = f.speedup
    return dataclasses.replace(f, speedup=dataclasses.replace(
        s, speedup=round(s.kernel_speedup * load.time_share, 6), kernel_share=round(load.time_share, 6),
        source="measured"))


def rank_order(findings: Sequence[Finding], loads: Mapping[str, KernelLoad] | None = None,
               records: Sequence[KernelRecord] = ()) -> list[tuple[int, Finding]]:
    """(index in ``findings``, finding with its measured impact) pairs, in ranked order."""
    loads = loads or {}
    keyed = []
    for i, f in enumerate(findings):
        updated = measured_impact(f, loads.get(f.kernel or ""), records)
        g = measured_speedup(updated if updated is not None else f, loads.get(f.kernel or ""))
        keyed.append(((g.status == "downgraded", speedup_key(g), g.priority.rank, is_advisory(g), updated is None,
                       -(g.score if g.score is not None else -1.0), i), i, g))
    return [(i, g) for _, i, g in sorted(keyed, key=lambda t: t[0])]


def rank_findings(findings: Sequence[Finding], loads: Mapping[str, KernelLoad] | None = None,
                  records: Sequence[KernelRecord] = ()) -> list[Finding]:
    """Findings with measured impacts where computable, in the order the module docstring gives."""
    return [g for _, g in rank_order(findings, loads, records)]


def first_steps(findings: Sequence[Finding], n: int = 3) -> list[str]:
    """The first ``n`` things to do: imperative sentences naming the rule, the place and the fix.

    Takes ``findings`` in their ranked order; skips validation findings (V*) and downgraded ones;
    one step per (rule, kernel, fix), listing every line it applies to.
    """
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.rule.startswith("V") or f.status == "downgraded":
            continue
        groups.setdefault((f.rule, f.kernel, f.file, f.fix), []).append(f)
    steps = []
    for (rule, kernel, file, fix), group in list(groups.items())[:n]:
        lines = sorted({g.line for g in group if g.line})
        where = file + (f":{lines[0]}" if len(lines) == 1 else f" lines {', '.join(map(str, lines))}" if lines else "")
        who = f"kernel `{kernel}`, " if kernel else ""
        text = fix.strip().rstrip(".")
        steps.append(f"{text[:1].upper()}{text[1:]} ({rule}: {who}{where}).")
    return steps
