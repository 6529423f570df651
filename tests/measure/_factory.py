"""Builds synthetic BenchResults for CPU tests (no GPU): samples drawn from a seeded distribution."""

from __future__ import annotations

import numpy as np

from cudalens.hardware.device import DeviceFacts
from cudalens.measure.result import BenchResult
from cudalens.measure.sampling import Sample
from cudalens.measure.stats import summarize


def fake_result(median_s: float, *, n: int = 50, noise: float = 0.002, seed: int = 0,
                kernel: str = "k", throttled: int = 0) -> BenchResult:
    rng = np.random.default_rng(seed)
    secs = median_s * (1.0 + noise * rng.standard_normal(n))
    samples = tuple(Sample(float(s), 1, 1980.0, False) for s in secs)
    samples += tuple(Sample(float(median_s * 3), 1, 900.0, True) for _ in range(throttled))
    return BenchResult(
        kernel=kernel, mode="cold", device=DeviceFacts(name="Fake GPU", cc="9.0", l2_bytes=50 << 20),
        config={"grid": [1, 1, 1]}, samples=samples, stop_reason="converged",
        summary=summarize([s.seconds for s in samples if not s.throttled]), code_hash="abc",
    )


def has_gpu() -> bool:
    """True when the CUDA driver loads and reports a device (same question as tests/conftest.py)."""
    try:
        from cudalens.hardware.cuda_driver import device_count

        return device_count() > 0
    except Exception:  # noqa: BLE001
        return False
