"""Inputs of the guided analysis, normalized: measurements, counters, ceilings, findings.

The guided layer joins what other layers produced (the analysis JSON, ncu counters, benchmark
results). Each arrives in more than one shape (an object or its JSON dict, one or many); the
functions here turn them into one shape so the models downstream stay small and pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from cudalens.errors import InputError
from cudalens.findings import Finding
from cudalens.hardware.device import DeviceFacts
from cudalens.measure.result import BenchResult
from cudalens.measure.throughput import Ceilings
from cudalens.profile.ncu import LaunchCounters, LegacyMetrics, base_kernel_name, by_kernel


@dataclass(frozen=True)
class Measurement:
    """One kernel's measured launch: median seconds per launch, bytes it moves, FLOP it performs.

    ``bytes_read``/``bytes_written`` are the bytes the caller declared to the benchmark (the
    guide's effective-bandwidth numerator); ``flops`` may be 0 when nobody declared them.
    """

    kernel: str
    seconds: float
    bytes_read: int = 0
    bytes_written: int = 0
    flops: float = 0.0
    device: DeviceFacts | None = None

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written


def measurement_from_bench(result: BenchResult | Mapping[str, Any]) -> Measurement:
    """A :class:`Measurement` from a BenchResult or its ``to_dict()`` form (median time)."""
    if isinstance(result, Mapping):
        try:
            result = BenchResult.from_dict(dict(result))
        except (KeyError, TypeError) as exc:
            raise InputError(f"not a cudalens benchmark result (missing {exc})") from None
    thr = result.throughput or {}
    return Measurement(
        kernel=base_kernel_name(result.kernel),
        seconds=float(result.summary.median),
        bytes_read=int(thr.get("bytes_read") or 0),
        bytes_written=int(thr.get("bytes_written") or 0),
        flops=float(thr.get("flops") or 0.0),
        device=result.device,
    )


def as_measurements(obj: Any) -> tuple[Measurement, ...]:
    """None, one measurement (Measurement, BenchResult or its dict) or an iterable of them."""
    if obj is None:
        return ()
    if isinstance(obj, Measurement):
        return (obj,)
    if isinstance(obj, (BenchResult, Mapping)):
        return (measurement_from_bench(obj),)
    if isinstance(obj, Iterable):
        out: list[Measurement] = []
        for item in obj:
            out.extend(as_measurements(item))
        return tuple(out)
    raise InputError(f"cannot read a measurement from a {type(obj).__name__}")


def as_counters(obj: Any) -> tuple[dict[str, LegacyMetrics], dict[str, tuple[LaunchCounters, ...]]]:
    """(legacy metrics by kernel, raw launches by kernel) from either accepted shape.

    ``obj`` is a dict kernel -> LegacyMetrics (from :func:`cudalens.profile.ncu.by_kernel`) or a
    sequence of LaunchCounters (from ``parse_csv``/``parse_csv_file``); only the second carries the
    raw sector counts that requested/actual throughput need.
    """
    if obj is None:
        return {}, {}
    if isinstance(obj, Mapping):
        bad = [k for k, v in obj.items() if not isinstance(v, LegacyMetrics)]
        if bad:
            raise InputError(f"counters for {bad[0]!r} are not LegacyMetrics")
        return dict(obj), {}
    launches = tuple(obj)
    if not all(isinstance(lc, LaunchCounters) for lc in launches):
        raise InputError("counters must be LegacyMetrics by kernel or a sequence of LaunchCounters")
    raw: dict[str, list[LaunchCounters]] = {}
    for lc in launches:
        raw.setdefault(lc.base_name, []).append(lc)
    return by_kernel(launches), {k: tuple(v) for k, v in raw.items()}


def device_ceilings(device: DeviceFacts, precision: str = "fp32") -> Ceilings:
    """Theoretical ceilings of a device: its DRAM bandwidth and its peak FMA FLOP/s.

    Peak FLOP/s = SMs x maximum SM clock x FMA results per clock per SM (the Programming Guide's
    throughput table for the device's CC) x 2. ``precision`` is fp16, fp32 or fp64. Unknown
    pieces (no CC in the table, no clock) leave that ceiling None.
    """
    from cudalens.hardware.throughput import peaks

    gflops = None
    sources: dict[str, str] = {}
    if device.cc and device.sm_count and device.max_sm_clock_mhz:
        try:
            key = f"{precision}_add_mul_fma"
            peak = next(p for p in peaks(device.cc, device.sm_count, device.max_sm_clock_mhz * 1e6) if p.key == key)
            if peak.per_s is not None:
                gflops = peak.per_s / 1e9
                sources["theoretical_gflops"] = peak.formula
        except (InputError, StopIteration):
            gflops = None
    if device.theoretical_bandwidth_gbs:
        sources["theoretical_bandwidth_gbs"] = "2 x memory clock x bus width / 8"
    return Ceilings(theoretical_bandwidth_gbs=device.theoretical_bandwidth_gbs, theoretical_gflops=gflops,
                    l2_bytes=device.l2_bytes or None, sources=sources)


def as_ceilings(obj: Any, measurements: Sequence[Measurement] = ()) -> Ceilings | None:
    """Ceilings given (object or dict), else those of the first measured device, else None."""
    if isinstance(obj, Ceilings):
        return obj
    if isinstance(obj, Mapping):
        return Ceilings(**{k: obj[k] for k in Ceilings.__dataclass_fields__ if k in obj})
    if obj is not None:
        raise InputError(f"cannot read ceilings from a {type(obj).__name__}")
    for m in measurements:
        if m.device is not None:
            return device_ceilings(m.device)
    return None


_FINDING_FIELDS = ("rule", "priority", "section", "kernel", "file", "line", "message", "fix", "impact",
                   "impact_text", "evidence", "status", "column", "runs", "impact_estimate", "advisory",
                   "speedup", "estimated_speedup")


def finding_from_dict(d: Mapping[str, Any]) -> Finding:
    """The inverse of the report's finding dict (``Finding.to_dict``)."""
    return Finding.from_dict(d)


def finding_to_dict(f: Finding, original: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report's finding dict: contract keys first, then the rest; keys of ``original`` kept."""
    d = f.to_dict()
    out = {k: d[k] for k in _FINDING_FIELDS}
    for k, v in (original or {}).items():
        out.setdefault(k, v)
    return out
