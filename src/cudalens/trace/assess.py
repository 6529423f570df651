"""Assess a traced application: where the GPU time goes, what the transfers cost, what the trace flags.

Pure functions on a :class:`~cudalens.trace.records.Trace`. Times are nanoseconds in the records and
seconds in the facts. Every share is of the **assessed span** unless it says otherwise: from the start
of the first NVTX range to the end of the last when the program marks its work with NVTX (a training
loop's steps), else from the first kernel's start to the last GPU activity's end (so start-up before
the first kernel -- imports, library loading, initial uploads -- does not dilute the shares). Kernel
time shares (``share``) are of the summed kernel time of the whole trace, the quantity Nsight
Compute's ``gpu__time_duration`` sums give.

Findings (each with its measured cost as ``impact``, a share of the assessed span):

* A1: the top kernels by time, with Amdahl's bound for speeding each one up (the APOD "assess"
  step), and the GPU's idle share with its largest gaps (time the host kept the GPU waiting).
* X1: host<->device copies repeated between kernel launches (the same size going over the bus
  again and again), cost = their time. X2: many small copies (< 64 KiB), cost = their time minus
  the time one batched copy of the same bytes would take at the link's theoretical bandwidth.
  X3: copies from or to pageable host memory, cost = their time. X4: synchronous copies in the
  kernel stream (the host waits and nothing overlaps), cost = the host time spent in them; and
  read-backs in a loop (a few bytes copied to the host, then a synchronize: ``loss.item()``),
  cost = the GPU's idle time after them (:mod:`cudalens.trace.readback`).
* E8: runs of back-to-back kernels on one stream that each fill less than the GPU (fewer blocks
  than multiprocessors): independent ones could run concurrently on separate streams; the trace
  cannot establish independence, so these are flagged candidates.
* M1: device allocations and frees repeated between kernel launches, cost = their host time.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cudalens.assess.scaling import amdahl, amdahl_limit
from cudalens.compiled.names import kernel_base_name
from cudalens.findings import Finding
from cudalens.rules._trace import SMALL_COPY
from cudalens.rules.context import RuleContext
from cudalens.rules.layers import TraceLayer
from cudalens.rules.registry import run_layer
from cudalens.trace.readback import loop_read_backs
from cudalens.trace.records import KernelRecord, Trace

GAP_MIN_NS = 10_000  # idle intervals shorter than 10 us are not reported as gaps


@dataclass(frozen=True)
class KernelSummary:
    name: str  # base name
    symbol: str  # as CUPTI reported it
    launches: int
    total_s: float
    share: float  # of all kernel time, 0..1
    span_share: float  # of the assessed span, 0..1
    mean_s: float
    min_s: float
    max_s: float
    grid: tuple[int, int, int]  # the most common launch configuration
    block: tuple[int, int, int]
    registers: int
    static_shared: int
    dynamic_shared: int
    local_per_thread: int
    streams: tuple[int, ...]
    amdahl_2x: float  # application speedup if this kernel ran 2x faster
    amdahl_limit: float | None  # ... if it took no time (None: unbounded)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["grid"], d["block"], d["streams"] = list(self.grid), list(self.block), list(self.streams)
        return d


@dataclass(frozen=True)
class TransferSummary:
    kind: str  # HtoD, DtoH, DtoD, memset, ...
    host_memory: str | None  # pageable / pinned for host<->device, else None
    count: int
    bytes: int
    total_s: float
    achieved_gbps: float | None  # bytes / total time, 10^9 B/s
    synchronous: int  # copies without the async flag
    small: int  # copies below SMALL_COPY

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class AppFacts:
    span_s: float
    busy_s: float
    busy_share: float
    kernel_s: float
    copy_s: float
    set_s: float
    launches: int
    kernels: tuple[KernelSummary, ...]
    transfers: tuple[TransferSummary, ...]
    gaps: tuple[tuple[float, float], ...]  # (start offset s, length s) of the largest idle intervals
    idle_s: float
    api_counts: dict[str, int] = field(default_factory=dict)
    api_time_s: dict[str, float] = field(default_factory=dict)
    syncs: int = 0
    ranges: tuple[dict[str, Any], ...] = ()
    link_gbps: float | None = None  # theoretical host<->device bandwidth per direction
    link: str | None = None
    window: str = ""  # how the assessed span was chosen
    trace_span_s: float = 0.0  # first to last GPU activity of the whole trace

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["kernels"] = [k.to_dict() for k in self.kernels]
        d["transfers"] = [t.to_dict() for t in self.transfers]
        d["gaps"] = [{"start_s": a, "length_s": b} for a, b in self.gaps]
        d["ranges"] = list(self.ranges)
        return d


def _union(intervals: list[tuple[int, int]]) -> tuple[int, list[tuple[int, int]]]:
    """Total covered length and the uncovered gaps between first start and last end."""
    if not intervals:
        return 0, []
    intervals = sorted(intervals)
    busy, gaps = 0, []
    cur_s, cur_e = intervals[0]
    for s, e in intervals[1:]:
        if s > cur_e:
            busy += cur_e - cur_s
            gaps.append((cur_e, s))
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    busy += cur_e - cur_s
    return busy, gaps


def _clip(s: int, e: int, window: tuple[int, int]) -> int:
    return max(0, min(e, window[1]) - max(s, window[0]))


def assessed_window(trace: Trace) -> tuple[tuple[int, int], str]:
    """(start, end) in ns of the span the shares are of, and how it was chosen."""
    if trace.ranges:
        return ((min(r.start_ns for r in trace.ranges), max(r.end_ns for r in trace.ranges)),
                f"NVTX ranges ({len(trace.ranges)})")
    recs = trace.gpu_records
    start = trace.kernels[0].start_ns if trace.kernels else min(s for s, _ in recs)
    return (start, max(e for _, e in recs)), "first kernel to last GPU activity"


def summarize_kernels(kernels: Sequence[KernelRecord], span_ns: int,
                      window: tuple[int, int] | None = None) -> tuple[KernelSummary, ...]:
    groups: dict[str, list[KernelRecord]] = defaultdict(list)
    for k in kernels:
        groups[k.name].append(k)
    total = sum(k.duration_ns for k in kernels) or 1
    out = []
    for symbol, ks in groups.items():
        t = sum(k.duration_ns for k in ks)
        config, _ = Counter((k.grid, k.block, k.registers, k.static_shared, k.dynamic_shared,
                             k.local_per_thread) for k in ks).most_common(1)[0]
        in_window = sum(_clip(k.start_ns, k.end_ns, window) for k in ks) if window else t
        span_share = min(in_window / span_ns, 1.0) if span_ns else 0.0
        limit = amdahl_limit(span_share)
        out.append(KernelSummary(
            name=kernel_base_name(symbol), symbol=symbol, launches=len(ks), total_s=t * 1e-9, share=t / total,
            span_share=span_share, mean_s=t / len(ks) * 1e-9, min_s=min(k.duration_ns for k in ks) * 1e-9,
            max_s=max(k.duration_ns for k in ks) * 1e-9, grid=config[0], block=config[1], registers=config[2],
            static_shared=config[3], dynamic_shared=config[4], local_per_thread=config[5],
            streams=tuple(sorted({k.stream for k in ks})), amdahl_2x=amdahl(span_share, 2),
            amdahl_limit=None if limit == float("inf") else limit))
    return tuple(sorted(out, key=lambda s: (-s.total_s, s.name)))


def summarize_transfers(trace: Trace) -> tuple[TransferSummary, ...]:
    groups: dict[tuple[str, str | None], list[Any]] = defaultdict(list)
    for c in trace.copies:
        groups[(c.kind, c.host_side)].append(c)
    for s in trace.sets:
        groups[("memset", None)].append(s)
    out = []
    for (kind, host), recs in groups.items():
        t = sum(r.duration_ns for r in recs)
        b = sum(r.bytes for r in recs)
        out.append(TransferSummary(kind, host, len(recs), b, t * 1e-9, (b / t) if t else None,
                                   sum(1 for r in recs if not r.is_async), sum(1 for r in recs if r.bytes < SMALL_COPY)))
    return tuple(sorted(out, key=lambda s: -s.total_s))


def _ranges(trace: Trace) -> tuple[dict[str, Any], ...]:
    groups: dict[str, list[int]] = defaultdict(list)
    for r in trace.ranges:
        key = r.name.rstrip("0123456789 ").strip() or r.name  # "step 0", "step 1" -> "step"
        groups[key].append(r.end_ns - r.start_ns)
    return tuple({"name": n, "count": len(v), "total_s": sum(v) * 1e-9, "mean_s": sum(v) / len(v) * 1e-9}
                 for n, v in sorted(groups.items(), key=lambda kv: -sum(kv[1])))


def app_facts(trace: Trace, *, link_gbps: float | None = None, link: str | None = None, gaps: int = 5) -> AppFacts:
    recs = trace.gpu_records
    if not recs:
        return AppFacts(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, (), (), (), 0.0, link_gbps=link_gbps, link=link)
    window, how = assessed_window(trace)
    first, span = window[0], window[1] - window[0]
    clipped = [(max(s, window[0]), min(e, window[1])) for s, e in recs if e > window[0] and s < window[1]]
    busy, holes = _union(clipped)
    if clipped:  # idle time at the window's edges (an NVTX range that starts before its first kernel)
        lo, hi = min(s for s, _ in clipped), max(e for _, e in clipped)
        holes = ([(window[0], lo)] if lo > window[0] else []) + holes + ([(hi, window[1])] if hi < window[1] else [])
    big = sorted((h for h in holes if h[1] - h[0] >= GAP_MIN_NS), key=lambda h: h[0] - h[1])[:gaps]
    api_counts: Counter[str] = Counter(a.name.split("_v")[0] for a in trace.api)
    api_time: dict[str, float] = defaultdict(float)
    for a in trace.api:
        api_time[a.name.split("_v")[0]] += a.duration_ns * 1e-9
    return AppFacts(
        span_s=span * 1e-9, busy_s=busy * 1e-9, busy_share=busy / span if span else 1.0,
        kernel_s=sum(k.duration_ns for k in trace.kernels) * 1e-9,
        copy_s=sum(c.duration_ns for c in trace.copies) * 1e-9, set_s=sum(s.duration_ns for s in trace.sets) * 1e-9,
        launches=len(trace.kernels), kernels=summarize_kernels(trace.kernels, span, window),
        transfers=summarize_transfers(trace),
        gaps=tuple(((a - first) * 1e-9, (b - a) * 1e-9) for a, b in big), idle_s=(span - busy) * 1e-9,
        api_counts=dict(api_counts), api_time_s=dict(api_time), syncs=len(trace.syncs), ranges=_ranges(trace),
        link_gbps=link_gbps, link=link, window=how,
        trace_span_s=(max(e for _, e in recs) - min(s for s, _ in recs)) * 1e-9,
    )


# ------------------------------------------------------------------------------------------ findings


def findings(trace: Trace, facts: AppFacts, program: str, *, sm_count: int | None = None, top: int = 5,
             min_share: float = 0.05) -> list[Finding]:
    """The application-level findings of one trace (see the module docstring): the detectors of
    the rules that read the ``trace`` layer."""
    if not facts.span_s:
        return []
    layer = TraceLayer(program=program, records=trace, facts=facts, sm_count=sm_count, top=top,
                       min_share=min_share, read_backs=loop_read_backs(trace))
    return run_layer(RuleContext.without_source(program, trace=layer), "trace")
