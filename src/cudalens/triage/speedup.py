"""Estimated speedup of each finding, the way Nsight Compute's rules carry one.

A kernel's time is estimated statically, per warp, from what the models say it does, each line
weighted by how often one thread runs it (:func:`cudalens.triage.impact.runs_per_thread`):

- **memory**: bytes moved, ``sectors per request x 32 B`` of each global access;
- **shared**: wavefronts of each shared access (one per cycle and SM);
- **compute**: instructions issued, the SASS counted per line when the file compiled, else
  :data:`INSTRUCTIONS_PER_LINE` per source line of the kernel's body.

Each is turned into cycles of one SM with the device's ceilings (:data:`DRAM_BYTES_PER_SM_CYCLE` of
the reference device of the compute capability, four warp instructions and one shared wavefront per
cycle), and the kernel is placed on the roofline: its time is the largest of the three (its
``bound``). A finding names what its fix saves: wasted bytes (coalescing and re-use rules),
wavefronts (bank conflicts), issued instructions (idle lanes, instruction choices), or a share of the
whole kernel (occupancy and launch shape). The kernel's estimated speedup is ``1 - T'/T``, with
``T'`` the roofline time once that saving is made: a memory fix in a compute-bound kernel buys
little, as Nsight Compute's rules say.

Across kernels, each kernel's speedup is weighted by its share of the file's estimated time: per-warp
time x warps (grid x block, where every kernel's launch is known) x launches
(:func:`kernel_launches`). With ``--run``/``--counters`` the measured time share replaces this
estimate (:mod:`cudalens.guided.rank`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cudalens.compiled.names import base_name_from_mangled
from cudalens.findings import Finding, SpeedupEstimate
from cudalens.source.trips import loop_trips

#: Instructions one source line of a kernel issues when the file did not compile.
INSTRUCTIONS_PER_LINE = 4.0
#: Warp instructions an SM issues per cycle (four schedulers), and shared wavefronts per cycle.
ISSUE_PER_CYCLE = 4.0
WAVEFRONTS_PER_CYCLE = 1.0
#: DRAM bytes per SM and SM cycle of the reference device of each major.minor (bandwidth / SMs /
#: boost clock): H100 SXM 3352 GB/s, 132 SMs, 1.98 GHz; A100 2039 GB/s, 108, 1.41; RTX 3090 936, 82,
#: 1.70; RTX 4090 1008, 128, 2.52; V100 898, 80, 1.53; T4 320, 40, 1.59.
DRAM_BYTES_PER_SM_CYCLE = {"9.0": 12.8, "8.0": 13.4, "8.6": 6.7, "8.7": 6.7, "8.9": 3.1, "7.5": 5.0,
                           "7.0": 7.3, "10.0": 13.0, "12.0": 4.0}
DEFAULT_DRAM_BYTES_PER_SM_CYCLE = 10.0
#: Rules whose fix saves bytes moved (the coalescing and re-use rules), and bank-conflict wavefronts.
MEMORY_RULES = frozenset({"G1", "G2", "G3", "G5", "G8", "SH2", "SH3", "K1"})
SHARED_RULES = frozenset({"SH1"})
#: Kernel-wide findings on latency hiding and launch shape (occupancy, idle SMs, idle lanes of a
#: partial warp): more warps in flight hide part of the time, not all of it.
OCCUPANCY_RULES = frozenset({"E1", "E2", "E3", "E4", "L2", "L3", "SH6"})
LATENCY_SHARE = 0.5
#: Host launches assumed for a launch site inside a host loop (the launch layer does not count host
#: loops); the estimate's ``launches`` says it.
LAUNCHES_IN_A_LOOP = 16.0


@dataclass(frozen=True)
class KernelTime:
    """A kernel's estimated time per warp in SM cycles, by resource, and how often it is launched."""

    kernel: str
    memory: float
    shared: float
    compute: float
    launches: float
    warps: float | None  # grid x block / 32 where the launch gives both

    @property
    def cycles(self) -> float:
        return max(self.memory, self.shared, self.compute, 1e-9)

    @property
    def bound(self) -> str:
        return max((self.memory, "memory"), (self.shared, "shared"), (self.compute, "compute"))[1]


def source_name(kernel: str | None) -> str:
    """The kernel's name as the source declares it (a compiled finding may carry the mangled symbol)."""
    if not kernel:
        return ""
    return base_name_from_mangled(kernel) if kernel.startswith("_Z") else kernel


def kernel_launches(model: Any, kernel: str) -> float:
    """How many times the program launches ``kernel``: one per launch site, a site in a host loop
    counting :data:`LAUNCHES_IN_A_LOOP`; 1 when no site is found. The one place the launch count is
    read (the project's launch layer, :mod:`cudalens.project.launches`, replaces it when merged)."""
    sites = [s for s in getattr(model, "launch_sites", ()) if s.kernel == kernel]
    if not sites:
        return 1.0
    return float(sum(LAUNCHES_IN_A_LOOP if s.loop_lines else 1.0 for s in sites))


def _warps(model: Any, kernel: str) -> float | None:
    for k in getattr(model, "kernels", ()):  # the project's launch layer first
        launch = getattr(k, "launch", None)
        if k.name == kernel and launch is not None and launch.origin != "assumed" \
                and isinstance(launch.block, tuple) and isinstance(launch.grid, tuple):
            b, g = launch.block, launch.grid
            return max(1.0, b[0] * b[1] * b[2] * g[0] * g[1] * g[2] / 32)
    for s in getattr(model, "launch_sites", ()):
        if s.kernel == kernel and s.block_dims and s.grid_dims:
            b, g = s.block_dims, s.grid_dims
            return max(1.0, b[0] * b[1] * b[2] * g[0] * g[1] * g[2] / 32)
    return None


def _line_instructions(k: Any, compiled: Any) -> dict[int, float]:
    by_line = getattr(compiled, "sass_by_line", None) or {}
    own = {ln: float(sum(c.values())) for ln, c in by_line.items() if k.line <= ln <= k.end_line}
    if own:
        return own
    lines = (k.node.text.decode(errors="replace").splitlines() if getattr(k, "node", None) is not None else [])
    body = [k.line + i for i, t in enumerate(lines) if i > 0 and t.strip() not in ("", "{", "}", "};")
            and not t.strip().startswith("//")]
    return {ln: INSTRUCTIONS_PER_LINE for ln in body}


def kernel_time(k: Any, model: Any, runs: Mapping[int, float], compiled: Any = None, cc: str = "9.0") -> KernelTime:
    """The kernel's per-warp time by resource (``runs``: line -> executions per thread)."""
    bpc = DRAM_BYTES_PER_SM_CYCLE.get(cc, DEFAULT_DRAM_BYTES_PER_SM_CYCLE)
    mem = shared = 0.0
    for a in k.accesses:
        r = runs.get(a.line, 1.0)
        if a.space == "global" and a.sectors_per_request:
            mem += a.sectors_per_request * 32 * r / bpc
        elif a.space == "shared" and a.wavefronts_per_request:
            shared += a.wavefronts_per_request * r / WAVEFRONTS_PER_CYCLE
    instr = sum(n * runs.get(ln, 1.0) for ln, n in _line_instructions(k, compiled).items())
    return KernelTime(k.name, mem, shared, instr / ISSUE_PER_CYCLE, kernel_launches(model, k.name),
                      _warps(model, k.name))


def _accesses(k: Any, f: Finding, space: str) -> list[Any]:
    return [a for a in k.accesses if a.line == f.line and a.space == space
            and (getattr(a, "file", None) or k.file) == (f.file or k.file)]  # (a header's inlined line: its file)


def _loop_cycles(k: Any, loop_line: int, runs: Mapping[int, float], line_instr: Mapping[int, float],
                 cc: str) -> float:
    """Per-warp cycles of the lines of the loop at ``loop_line`` on the roofline (the largest of
    their memory, shared and issue times, as :func:`kernel_time` counts them)."""
    lp = next((lp for lp in k.loops if lp.line == loop_line), None)
    if lp is None:
        return 0.0
    inside = {ln: r for ln, r in runs.items() if lp.line <= ln <= lp.end_line}
    bpc = DRAM_BYTES_PER_SM_CYCLE.get(cc, DEFAULT_DRAM_BYTES_PER_SM_CYCLE)
    mem = sum(a.sectors_per_request * 32 * inside[a.line] / bpc for a in k.accesses
              if a.line in inside and a.space == "global" and a.sectors_per_request)
    shared = sum(a.wavefronts_per_request * inside[a.line] / WAVEFRONTS_PER_CYCLE for a in k.accesses
                 if a.line in inside and a.space == "shared" and a.wavefronts_per_request)
    instr = sum(n * inside[ln] for ln, n in line_instr.items() if ln in inside)
    return max(mem, shared, instr / ISSUE_PER_CYCLE)


def _saving(f: Finding, k: Any, t: KernelTime, runs: Mapping[int, float], cc: str,
            line_instr: Mapping[int, float], trips_of: Any = None) -> tuple[str, float] | None:
    """(resource, cycles per warp its fix saves) for finding ``f`` of kernel ``k``; None when the
    models give no figure for it."""
    r = f.runs if f.runs is not None else runs.get(f.line or 0, 1.0)
    bpc = DRAM_BYTES_PER_SM_CYCLE.get(cc, DEFAULT_DRAM_BYTES_PER_SM_CYCLE)
    reread = next((e.value for e in f.evidence if e.fact == "whole_array_reread"), None)
    if reread is not None and f.impact is not None:
        # every thread scans the whole array: the loop's time is the kernel's work the fix removes
        # (its share ``impact`` of the loop, memory and issue alike: a tile or a new algorithm)
        return "kernel", f.impact * _loop_cycles(k, reread["loop_line"], runs, line_instr, cc)
    if f.rule in MEMORY_RULES:
        loads = [a for a in _accesses(k, f, "global") + _accesses(k, f, "constant") if a.sectors_per_request]
        waste = f.impact
        if waste is None and f.rule == "G8":  # a loop-invariant re-read: hoisted, it runs once per loop
            inner = [lp for lp in k.loops if lp.line <= (f.line or 0) <= lp.end_line]
            trips = (trips_of or loop_trips)(inner[-1]).value if inner else 1.0
            waste = 1.0 - 1.0 / max(trips, 1.0)
        if waste is None:
            return None
        sectors = max((a.sectors_per_request for a in loads), default=4.0)
        more = [ln for e in f.evidence if e.fact == "struct_access_lines" for ln in e.value if ln != f.line]
        r += sum(runs.get(ln, 1.0) for ln in more)  # one finding for every line of an array of structs
        return "memory", waste * sectors * 32 * r / bpc
    if f.rule in SHARED_RULES:
        shared = [a for a in _accesses(k, f, "shared") if a.wavefronts_per_request]
        if not shared:
            return None if f.impact is None else ("shared", f.impact * t.shared)
        extra = max((a.wavefronts_per_request or 0) - (a.ideal_wavefronts_per_request or 1) for a in shared)
        return "shared", max(0.0, extra) * r / WAVEFRONTS_PER_CYCLE
    if f.impact is None:
        return None
    if any(e.fact == "guarded_loop" for e in f.evidence):  # one lane runs a loop the warp could share
        return "kernel", f.impact * t.cycles
    if f.line is None or not k.line <= f.line <= k.end_line or f.line == k.line or f.rule in OCCUPANCY_RULES:
        share = LATENCY_SHARE if f.rule in OCCUPANCY_RULES else 1.0
        return "kernel", f.impact * share * t.cycles
    return "compute", f.impact * line_instr.get(f.line, INSTRUCTIONS_PER_LINE) * r / ISSUE_PER_CYCLE


def _after(t: KernelTime, resource: str, saved: float) -> float:
    if resource == "kernel":
        return max(0.0, t.cycles - saved)
    parts = {"memory": t.memory, "shared": t.shared, "compute": t.compute}
    parts[resource] = max(0.0, parts[resource] - saved)
    return max(parts.values())


def estimate_speedups(findings: Iterable[Finding], model: Any, runs_of: Any,
                      compiled: Mapping[str, Any] | None = None, cc: str = "9.0",
                      trips: Mapping[str, Any] | None = None) -> list[Finding]:
    """Each kernel finding with its :class:`~cudalens.findings.SpeedupEstimate` (``runs_of(kernel, line)``
    gives executions per thread, ``trips[kernel](loop)`` a loop's trips); host findings and findings the models give no figure for are kept
    as they are (no estimate: they rank by guide priority after the estimated ones of equal speedup)."""
    findings = list(findings)
    kernels = {k.name: k for k in getattr(model, "kernels", ())}
    times: dict[str, tuple[KernelTime, dict[int, float], dict[int, float]]] = {}
    for name in {source_name(f.kernel) for f in findings} & set(kernels):
        k = kernels[name]
        ck = (compiled or {}).get(name)
        lines = _line_instructions(k, ck)
        runs = {ln: runs_of(k, ln) for ln in set(lines) | {a.line for a in k.accesses}}
        times[name] = (kernel_time(k, model, runs, ck, cc), runs, lines)
    known_warps = all(t.warps is not None for t, _, _ in times.values())
    weight = {n: t.cycles * t.launches * ((t.warps or 1.0) if known_warps else 1.0) for n, (t, _, _) in times.items()}
    total = sum(weight.values()) or 1.0
    out = []
    for f in findings:
        name = source_name(f.kernel)
        if name not in times:
            out.append(f)
            continue
        t, runs, lines = times[name]
        saving = _saving(f, kernels[name], t, runs, cc, lines, (trips or {}).get(name))
        if saving is None:
            out.append(f)
            continue
        resource, saved = saving
        local = max(0.0, 1.0 - _after(t, resource, saved) / t.cycles)
        share = weight[name] / total
        est = SpeedupEstimate(
            speedup=round(local * share, 6), kernel_speedup=round(local, 6), kernel_share=round(share, 6),
            bound=t.bound, resource=resource, saved_cycles_per_warp=round(saved, 3),
            kernel_cycles_per_warp=(("memory", round(t.memory, 3)), ("shared", round(t.shared, 3)),
                                    ("compute", round(t.compute, 3))),
            launches=t.launches, warps=t.warps, source="static")
        out.append(dataclasses.replace(f, speedup=est))
    return out
