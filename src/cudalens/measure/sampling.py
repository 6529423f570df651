"""Adaptive sampling: when to stop taking samples, and which samples to keep.

The stopping rule is a pure function (:func:`stop_reason`) of the samples so far, the elapsed
wall time and a :class:`SamplingPolicy`. :func:`collect` drives it with two injected callables, one
that takes a sample and one that reads a clock, so tests run it on a simulated GPU and a fake clock.

Noise criterion (documented choice): the *relative standard deviation* of the kept samples,
``stdev / mean`` with ``ddof=1``. Sampling stops as soon as

* at least ``min_samples`` samples are kept, **and**
* at least ``min_time_s`` seconds of wall time have passed since sampling began (wall time, not
  summed GPU time: for a 5 us kernel 0.5 s of GPU time would take 100 000 samples), **and**
* their relative stdev is at most ``noise_target`` (0.5 % by default);

or, whatever the noise, when ``max_time_s`` of wall time has passed or ``max_samples`` samples
were taken (kept or not). This is simpler than NVBench's rule, which additionally waits for the
stdev estimate itself to stop drifting; the plain rule can stop a little early on heavy-tailed data,
which is why the minimum count and minimum time exist.

Throttle filter: a sample whose SM clock (sampled from NVML right after it) is below
``throttle_fraction`` (75 %) of the reference clock is marked throttled, kept in the record, and
excluded from the statistics and from the stopping rule.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np

from cudalens.measure.stats import relative_stdev


@dataclass(frozen=True)
class SamplingPolicy:
    """Limits of one adaptive measurement. Times in seconds; ``noise_target`` is a fraction."""

    noise_target: float = 0.005
    min_samples: int = 10
    min_time_s: float = 0.5
    max_time_s: float = 10.0
    max_samples: int = 10_000
    warmup: int = 3
    throttle_fraction: float = 0.75

    def __post_init__(self) -> None:
        if self.min_samples < 2:
            raise ValueError("min_samples must be at least 2 (a stdev needs two samples)")
        if self.max_samples < self.min_samples:
            raise ValueError("max_samples must be >= min_samples")
        if not 0 < self.throttle_fraction <= 1:
            raise ValueError("throttle_fraction must lie in (0, 1]")
        if self.noise_target <= 0 or self.max_time_s <= 0 or self.min_time_s < 0:
            raise ValueError("noise_target and max_time_s must be positive, min_time_s non-negative")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Sample:
    """One timed sample: ``seconds`` is GPU time per launch (a batch's time divided by its size):
    the kernels' own durations from CUPTI when ``timer == "cupti"``; the CUDA-event interval less
    the event floor (what an event pair with nothing between them measures) when ``"events"``;
    the event interval as it is when ``"events-raw"``. ``event_seconds`` is always the raw event
    interval per launch.

    ``sm_clock_mhz`` is the SM clock read right after the sample (None when NVML is not available);
    ``throttled`` marks a sample excluded from the statistics.
    """

    seconds: float
    batch: int = 1
    sm_clock_mhz: float | None = None
    throttled: bool = False
    event_seconds: float | None = None  # the raw CUDA-event interval per launch
    timer: str = "events"  # "events" | "events-raw" | "graph" | "cupti" (kernel activity records)
    other_work_s: float | None = None  # wait for the rest of the context after the stop event
    untrusted: str = ""  # why the sample is excluded besides throttling (e.g. work on another stream)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_throttled(sm_clock_mhz: float | None, reference_mhz: float | None, fraction: float) -> bool:
    """True when the clock is known and below ``fraction`` of the reference clock."""
    if sm_clock_mhz is None or not reference_mhz:
        return False
    return sm_clock_mhz < fraction * reference_mhz


def kept(samples: Sequence[Sample]) -> list[float]:
    """Seconds of the samples that count (not throttled, not untrusted)."""
    return [s.seconds for s in samples if not s.throttled and not s.untrusted]


class SampleCounts:
    """``kept_seconds`` and ``throttled_count`` of a record holding ``samples`` (all of them, throttled
    too): what :class:`Collected` and the benchmark result both report."""

    samples: tuple[Sample, ...]

    @property
    def kept_seconds(self) -> list[float]:
        return kept(self.samples)

    @property
    def throttled_count(self) -> int:
        return sum(1 for s in self.samples if s.throttled)


def stop_reason(samples: Sequence[Sample], elapsed_s: float, policy: SamplingPolicy) -> str | None:
    """Why sampling should stop now, or None to go on. Pure: depends only on its arguments.

    Reasons: ``"converged"`` (noise target met with enough samples and time), ``"timeout"`` (wall
    time used up), ``"max_samples"`` (sample budget used up).
    """
    good = kept(samples)
    if (
        len(good) >= policy.min_samples
        and elapsed_s >= policy.min_time_s
        and relative_stdev(good) <= policy.noise_target
    ):
        return "converged"
    if elapsed_s >= policy.max_time_s:
        return "timeout"
    if len(samples) >= policy.max_samples:
        return "max_samples"
    return None


class NoiseTarget:
    """The default stopping criterion: :func:`stop_reason` under a :class:`SamplingPolicy`."""

    name = "noise-target"

    def __init__(self, policy: SamplingPolicy) -> None:
        self.policy = policy

    def stop(self, samples: Sequence[Sample], elapsed_s: float) -> str | None:
        return stop_reason(samples, elapsed_s, self.policy)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "noise_target": self.policy.noise_target,
                "min_samples": self.policy.min_samples, "min_time_s": self.policy.min_time_s,
                "max_time_s": self.policy.max_time_s}


class FixedSamples:
    """Stop after exactly ``count`` trusted samples (or ``max_time_s`` of wall time)."""

    name = "fixed"

    def __init__(self, count: int, max_time_s: float = 60.0) -> None:
        if count < 2:
            raise ValueError("count must be at least 2")
        self.count, self.max_time_s = int(count), float(max_time_s)

    def stop(self, samples: Sequence[Sample], elapsed_s: float) -> str | None:
        if len(kept(samples)) >= self.count:
            return "count"
        return "timeout" if elapsed_s >= self.max_time_s else None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "count": self.count, "max_time_s": self.max_time_s}


@dataclass(frozen=True)
class Collected(SampleCounts):
    """All samples of one measurement (throttled ones included) and why sampling stopped."""

    samples: tuple[Sample, ...]
    stop: str
    elapsed_s: float


def collect(
    take_sample: Callable[[], Sample],
    policy: SamplingPolicy,
    clock: Callable[[], float],
    *,
    on_sample: Callable[[Sample], None] | None = None,
    criterion: Any = None,
) -> Collected:
    """Take ``policy.warmup`` unrecorded samples, then samples until :func:`stop_reason` says stop.

    ``clock`` returns seconds (``time.perf_counter`` on a real run, a fake in tests). A sample that
    is throttled must already be marked so by ``take_sample``. ``criterion``: any object with
    ``stop(samples, elapsed_s) -> reason | None`` (default :class:`NoiseTarget` of ``policy``).
    """
    crit = criterion if criterion is not None else NoiseTarget(policy)
    for _ in range(policy.warmup):
        take_sample()
    start = clock()
    samples: list[Sample] = []
    while True:
        reason = crit.stop(samples, clock() - start)
        if reason is not None:
            return Collected(tuple(samples), reason, clock() - start)
        s = take_sample()
        samples.append(s)
        if on_sample is not None:
            on_sample(s)


SIDE_WORK_FRACTION = 0.25  # of the samples: below this, long waits are host jitter (seen on an H100)


def side_work(samples: Any, threshold_s: float) -> tuple[tuple[Sample, ...], dict[str, Any]]:
    """Samples with those that waited for other work marked untrusted, when enough of them did.

    A single long wait after the stop event is usually the host (an interrupt, the garbage
    collector): on an H100 honest kernels showed 1-7 such samples in a hundred. Work on another
    stream shows in most samples. So the run is judged, not each sample: only when at least
    ``SIDE_WORK_FRACTION`` of the samples (and 3) waited longer than ``threshold_s`` are those
    samples marked untrusted and the check fails.
    """
    waits = [s.other_work_s for s in samples if s.other_work_s is not None]
    long_ = [s for s in samples if s.other_work_s is not None and s.other_work_s > threshold_s]
    found = bool(waits) and len(long_) >= max(3, SIDE_WORK_FRACTION * len(waits))
    info = {"threshold_s": threshold_s, "long_waits": len(long_), "samples": len(waits), "found": found,
            "median_wait_s": float(np.median(waits)) if waits else None}
    if not found:
        return tuple(samples), info
    why = f"work elsewhere still ran after the stop event (waited > {threshold_s * 1e6:.0f} us)"
    out = tuple(replace(s, untrusted=why) if s in long_ else s for s in samples)
    return out, info
