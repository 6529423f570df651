"""Statistics of timing samples: pure functions over arrays of seconds.

Everything here is deterministic: the bootstrap uses a seeded generator, so the same samples give
the same confidence interval on every machine. Times are in seconds throughout.

The comparison rule (used by ``cudalens compare``):

* Each run's median gets a bootstrap 95 % confidence interval (resample the kept samples with
  replacement, take the median of each resample, keep the 2.5th and 97.5th percentiles).
* B is SLOWER than A when B's interval lies entirely above A's (B.low > A.high), FASTER when it lies
  entirely below (B.high < A.low), and SAME when the two intervals overlap.
* ``ratio`` is median(B) / median(A): 1.10 means B takes 10 % longer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

DEFAULT_SEED = 20240531
DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True)
class Summary:
    """Summary of a set of kept samples. Times in seconds; ``rel_stdev`` is stdev/mean (a fraction)."""

    n: int
    median: float
    mean: float
    min: float
    max: float
    stdev: float
    rel_stdev: float
    q1: float
    q3: float
    iqr: float
    ci_low: float
    ci_high: float
    ci_level: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Summary":
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def relative_stdev(values: Sequence[float]) -> float:
    """Sample standard deviation divided by the mean (a fraction); ``inf`` with fewer than 2 values."""
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        return float("inf")
    mean = float(arr.mean())
    if mean == 0.0:
        return float("inf")
    return float(arr.std(ddof=1) / abs(mean))


def bootstrap_median_ci(
    values: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of the median (seeded, so reproducible)."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("no samples")
    if arr.size == 1:
        return float(arr[0]), float(arr[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(resamples, arr.size))
    medians = np.median(arr[idx], axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(medians, [alpha, 1.0 - alpha])
    return float(low), float(high)


def summarize(values: Sequence[float], *, level: float = 0.95, seed: int = DEFAULT_SEED) -> Summary:
    """Median, mean, extremes, spread and a bootstrap CI of the median of ``values`` (seconds)."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("no samples to summarize")
    q1, q3 = np.quantile(arr, [0.25, 0.75])
    low, high = bootstrap_median_ci(arr, level=level, seed=seed)
    stdev = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
    return Summary(
        n=int(arr.size),
        median=float(np.median(arr)),
        mean=float(arr.mean()),
        min=float(arr.min()),
        max=float(arr.max()),
        stdev=stdev,
        rel_stdev=relative_stdev(arr) if arr.size > 1 else 0.0,
        q1=float(q1),
        q3=float(q3),
        iqr=float(q3 - q1),
        ci_low=low,
        ci_high=high,
        ci_level=level,
    )


@dataclass(frozen=True)
class Comparison:
    """Result of comparing run B against run A (see the module docstring for the rule)."""

    median_a: float
    median_b: float
    ratio: float  # median_b / median_a
    ci_a: tuple[float, float]
    ci_b: tuple[float, float]
    verdict: str  # FASTER | SLOWER | SAME (B relative to A)

    @property
    def slower_by(self) -> float:
        """How much longer B takes than A, as a fraction (negative when B is faster)."""
        return self.ratio - 1.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci_a"] = list(self.ci_a)
        d["ci_b"] = list(self.ci_b)
        d["slower_by"] = self.slower_by
        return d


def verdict_from_intervals(ci_a: tuple[float, float], ci_b: tuple[float, float]) -> str:
    """FASTER/SLOWER/SAME for B against A: only non-overlapping intervals decide."""
    if ci_b[0] > ci_a[1]:
        return "SLOWER"
    if ci_b[1] < ci_a[0]:
        return "FASTER"
    return "SAME"


def compare(samples_a: Sequence[float], samples_b: Sequence[float], *, seed: int = DEFAULT_SEED) -> Comparison:
    """Compare two runs' samples (seconds); B against A."""
    sa = summarize(samples_a, seed=seed)
    sb = summarize(samples_b, seed=seed)
    ci_a = (sa.ci_low, sa.ci_high)
    ci_b = (sb.ci_low, sb.ci_high)
    return Comparison(
        median_a=sa.median,
        median_b=sb.median,
        ratio=sb.median / sa.median if sa.median > 0 else float("inf"),
        ci_a=ci_a,
        ci_b=ci_b,
        verdict=verdict_from_intervals(ci_a, ci_b),
    )


def fails_threshold(comparison: Comparison, max_slowdown: float) -> bool:
    """True when B is SLOWER (intervals apart) and its median is more than ``max_slowdown`` longer.

    ``max_slowdown`` is a fraction: 0.05 for "5 %". Both conditions are needed, so noise alone
    (overlapping intervals) never fails a CI job, and neither does a real but tolerated slowdown.
    """
    return comparison.verdict == "SLOWER" and comparison.slower_by > max_slowdown


def parse_percent(text: str) -> float:
    """'5%' -> 0.05, '0.05' -> 0.05, '5' -> 0.05 (numbers above 1 are read as percent)."""
    t = text.strip()
    try:
        if t.endswith("%"):
            value = float(t[:-1]) / 100.0
        else:
            value = float(t)
            if value >= 1.0:
                value /= 100.0
    except ValueError:
        raise ValueError(f"not a percentage: {text!r} (write e.g. 5%)") from None
    if value < 0:
        raise ValueError(f"percentage must not be negative: {text!r}")
    return value
