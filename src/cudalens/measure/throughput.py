"""Effective bandwidth and FLOP rate of a measured kernel, against theoretical and measured ceilings.

Effective bandwidth follows the Best Practices Guide (section 8.2.2): the bytes the kernel reads
plus the bytes it writes, divided by 10^9 and by the time in seconds, giving GB/s (GB = 10^9 B).
Pure functions: every input is a number the caller measured or was given.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


def effective_bandwidth_gbs(bytes_read: int, bytes_written: int, seconds: float) -> float:
    """(Br + Bw) / 10^9 / seconds, in GB/s."""
    if seconds <= 0:
        raise ValueError("time must be positive")
    return (bytes_read + bytes_written) / 1e9 / seconds


def flop_rate_gflops(flops: float, seconds: float) -> float:
    """Floating-point operations per second, in GFLOP/s (10^9 FLOP/s)."""
    if seconds <= 0:
        raise ValueError("time must be positive")
    return flops / 1e9 / seconds


@dataclass(frozen=True)
class Ceilings:
    """What the device can do. Bandwidths in GB/s, FLOP rates in GFLOP/s, sizes in bytes.

    ``theoretical_*`` come from the device report; ``measured_*`` from our copy kernel and a large
    GEMM run on this device. Any of them may be unknown (None).
    """

    theoretical_bandwidth_gbs: float | None = None
    measured_bandwidth_gbs: float | None = None
    theoretical_gflops: float | None = None
    measured_gflops: float | None = None
    l2_bytes: int | None = None
    sources: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Rates:
    """Achieved bandwidth (GB/s) and FLOP rate (GFLOP/s) and their shares (percent) of the ceilings.

    None where the amount was zero or the ceiling is unknown. The one place a measured kernel's rates
    are set against the device: the harness's :class:`Throughput` and guided analysis's speed of
    light both read them from :func:`rates`.
    """

    bandwidth_gbs: float | None
    gflops: float | None
    pct_theoretical_bandwidth: float | None
    pct_measured_bandwidth: float | None
    pct_theoretical_flops: float | None
    pct_measured_flops: float | None


def rates(nbytes: float, flops: float, seconds: float, ceilings: Ceilings) -> Rates:
    """``nbytes`` and ``flops`` moved and done in ``seconds``, against ``ceilings``."""
    bw = nbytes / 1e9 / seconds if nbytes > 0 else None
    gf = flop_rate_gflops(flops, seconds) if flops > 0 else None
    return Rates(
        bandwidth_gbs=bw,
        gflops=gf,
        pct_theoretical_bandwidth=_pct(bw, ceilings.theoretical_bandwidth_gbs),
        pct_measured_bandwidth=_pct(bw, ceilings.measured_bandwidth_gbs),
        pct_theoretical_flops=_pct(gf, ceilings.theoretical_gflops),
        pct_measured_flops=_pct(gf, ceilings.measured_gflops),
    )


@dataclass(frozen=True)
class Throughput(Rates):
    """The rates of one kernel at its median time (see :class:`Rates`), what it moved, and warnings."""

    seconds: float
    bytes_read: int
    bytes_written: int
    flops: float
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["warnings"] = list(self.warnings)
        return d


def _pct(value: float | None, ceiling: float | None) -> float | None:
    if value is None or not ceiling:
        return None
    return 100.0 * value / ceiling


def assess_throughput(
    seconds: float,
    bytes_read: int,
    bytes_written: int,
    flops: float,
    ceilings: Ceilings,
    *,
    hot: bool,
) -> Throughput:
    """Bandwidth and FLOP rate at ``seconds`` per launch, shares of the ceilings, and warnings.

    Warnings: effective bandwidth above the DRAM ceiling (the data must have come from a cache, so
    the number says nothing about DRAM); a hot measurement whose working set fits in L2 (later
    launches read from L2, measure cold for DRAM behaviour).
    """
    if seconds <= 0:
        raise ValueError("time must be positive")
    total = bytes_read + bytes_written
    r = rates(total, flops, seconds, ceilings)
    bw = r.bandwidth_gbs
    warnings: list[str] = []
    dram = ceilings.measured_bandwidth_gbs or ceilings.theoretical_bandwidth_gbs
    if bw is not None and dram and bw > dram:
        warnings.append(
            f"effective bandwidth {bw:.1f} GB/s exceeds the DRAM ceiling {dram:.1f} GB/s: "
            "the data sat in cache, so this is not a DRAM figure"
        )
    if hot and total > 0 and ceilings.l2_bytes and total <= ceilings.l2_bytes:
        warnings.append(
            f"hot run with a working set of {total / 1e6:.1f} MB that fits in L2 "
            f"({ceilings.l2_bytes / 1e6:.1f} MB): repeated launches read from L2; use --cold for DRAM behaviour"
        )
    return Throughput(
        seconds=seconds,
        bytes_read=bytes_read,
        bytes_written=bytes_written,
        flops=flops,
        warnings=tuple(warnings),
        **asdict(r),
    )
