"""Speed of light: how close a measured kernel runs to what the device can do.

From one measurement (seconds per launch, bytes moved, floating-point operations) and the
ceilings (theoretical DRAM bandwidth and peak FLOP/s of the device, plus measured ceilings when a
bandwidth test or GEMM was run) it computes:

- achieved bandwidth = bytes / seconds, as a share of each bandwidth ceiling;
- achieved FLOP/s = flops / seconds, as a share of each FLOP/s ceiling;
- arithmetic intensity = flops / DRAM bytes (FLOP per byte) and the roofline point: the attainable
  FLOP/s at that intensity is min(peak FLOP/s, peak bandwidth x intensity); the kernel is
  memory-bound left of the ridge point (peak FLOP/s / peak bandwidth), compute-bound right of it.

Bytes come from the counters (DRAM bytes read + written, what really crossed the memory bus) when
present, else from the bytes the benchmark was told the kernel moves. GB = 10^9 B, GFLOP = 10^9 FLOP.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from cudalens.guided.inputs import Measurement
from cudalens.measure.throughput import Ceilings, Rates, rates
from cudalens.profile.ncu import LegacyMetrics


@dataclass(frozen=True)
class SpeedOfLight(Rates):
    """Achieved rates of one kernel (see :class:`Rates`) and its roofline point; None = unknown."""

    kernel: str
    seconds: float
    bytes: float
    bytes_source: str  # "counters" (DRAM bytes) or "measurement" (declared bytes)
    flops: float
    flops_source: str  # "measurement", "counters" or "none"
    arithmetic_intensity: float | None  # FLOP per byte
    peak_flops: float | None  # FLOP/s used for the roofline
    peak_bandwidth_bytes_per_s: float | None  # B/s used for the roofline
    pct_of_roofline: float | None  # achieved FLOP/s / attainable FLOP/s at this intensity
    bound: str | None  # "memory" or "compute" (side of the ridge point), None when unknown
    lines: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["lines"] = list(self.lines)
        return d

    def roofline(self) -> dict[str, Any] | None:
        """The point ``render_html`` draws, or None when a ceiling or the intensity is unknown."""
        if (self.peak_flops is None or self.peak_bandwidth_bytes_per_s is None or self.arithmetic_intensity is None
                or self.gflops is None):
            return None
        return {"kernel": self.kernel, "peak_flops": self.peak_flops,
                "peak_bandwidth_bytes_per_s": self.peak_bandwidth_bytes_per_s,
                "arithmetic_intensity": self.arithmetic_intensity, "achieved_flops": self.gflops * 1e9}


def _shares(pct_theory: float | None, theory: float | None, pct_meas: float | None, meas: float | None,
            unit: str) -> str:
    parts = []
    if pct_theory is not None:
        parts.append(f"{pct_theory:.1f} % of the theoretical {theory:.1f} {unit}")
    if pct_meas is not None:
        parts.append(f"{pct_meas:.1f} % of the measured {meas:.1f} {unit}")
    return ", ".join(parts) if parts else "no ceiling known"


def speed_of_light(m: Measurement, ceilings: Ceilings | None = None,
                   counters: LegacyMetrics | None = None) -> SpeedOfLight:
    """Achieved bandwidth and FLOP/s of ``m`` against ``ceilings``; see the module docstring."""
    if m.seconds <= 0:
        raise ValueError("a measurement needs a positive time")
    c = ceilings or Ceilings()
    if counters is not None and counters.dram_bytes:
        nbytes, bsrc = float(counters.dram_bytes), "counters"
    else:
        nbytes, bsrc = float(m.bytes), "measurement"
    if m.flops > 0:
        flops, fsrc = float(m.flops), "measurement"
    elif counters is not None and counters.flops:
        flops, fsrc = float(counters.flops), "counters"
    else:
        flops, fsrc = 0.0, "none"
    sol = rates(nbytes, flops, m.seconds, c)
    bw, gf = sol.bandwidth_gbs, sol.gflops
    ai = flops / nbytes if flops > 0 and nbytes > 0 else None
    peak_gf = c.theoretical_gflops or c.measured_gflops
    peak_bw = c.theoretical_bandwidth_gbs or c.measured_bandwidth_gbs
    peak_flops = peak_gf * 1e9 if peak_gf else None
    peak_bps = peak_bw * 1e9 if peak_bw else None
    pct_roof = bound = None
    if ai is not None and gf is not None and peak_flops and peak_bps:
        attainable = min(peak_flops, peak_bps * ai)
        pct_roof = 100.0 * gf * 1e9 / attainable
        bound = "memory" if peak_bps * ai < peak_flops else "compute"
    lines = [f"{m.kernel}: {m.seconds * 1e3:.4g} ms per launch."]
    if bw is not None:
        what = "DRAM traffic (ncu)" if bsrc == "counters" else "declared traffic"
        lines.append(f"{m.kernel}: {what} {nbytes / 1e6:.4g} MB -> {bw:.1f} GB/s = "
                     + _shares(sol.pct_theoretical_bandwidth, c.theoretical_bandwidth_gbs,
                               sol.pct_measured_bandwidth, c.measured_bandwidth_gbs, "GB/s") + ".")
    if gf is not None:
        lines.append(f"{m.kernel}: {flops / 1e6:.4g} MFLOP -> {gf:.1f} GFLOP/s = "
                     + _shares(sol.pct_theoretical_flops, c.theoretical_gflops,
                               sol.pct_measured_flops, c.measured_gflops, "GFLOP/s") + ".")
    if pct_roof is not None and peak_flops and peak_bps:
        ridge = peak_flops / peak_bps
        lines.append(f"{m.kernel}: arithmetic intensity {ai:.3g} FLOP/B, ridge point {ridge:.3g} FLOP/B: "
                     f"{bound}-bound; {pct_roof:.1f} % of the roofline at this intensity.")
    return SpeedOfLight(kernel=m.kernel, seconds=m.seconds, bytes=nbytes, bytes_source=bsrc, flops=flops,
                        flops_source=fsrc, arithmetic_intensity=ai, peak_flops=peak_flops,
                        peak_bandwidth_bytes_per_s=peak_bps, pct_of_roofline=pct_roof, bound=bound,
                        lines=tuple(lines), **asdict(sol))
