"""The stopping rule and the sampler loop, on a simulated GPU and a simulated clock."""

import numpy as np
import pytest

from cudalens.measure.sampling import Sample, SamplingPolicy, collect, is_throttled, stop_reason


class SimGPU:
    """Returns samples around ``t`` seconds with relative noise ``noise``; advances a fake clock."""

    def __init__(self, t, noise, *, overhead=50e-6, throttle_every=0, seed=0):
        self.t, self.noise, self.overhead = t, noise, overhead
        self.rng = np.random.default_rng(seed)
        self.now = 0.0
        self.count = 0
        self.throttle_every = throttle_every

    def clock(self):
        return self.now

    def sample(self):
        self.count += 1
        s = self.t * (1 + self.noise * self.rng.standard_normal())
        self.now += s + self.overhead
        throttled = bool(self.throttle_every) and self.count % self.throttle_every == 0
        clock = 900.0 if throttled else 1980.0
        return Sample(s, 1, clock, is_throttled(clock, 1980.0, 0.75))


def test_quiet_kernel_converges_after_min_time():
    gpu = SimGPU(1e-3, 0.001)
    pol = SamplingPolicy(min_time_s=0.5, max_time_s=10.0)
    out = collect(gpu.sample, pol, gpu.clock)
    assert out.stop == "converged"
    assert 0.5 <= out.elapsed_s < 0.52
    assert len(out.samples) >= pol.min_samples


def test_noisy_kernel_runs_into_timeout():
    gpu = SimGPU(1e-3, 0.05)
    out = collect(gpu.sample, SamplingPolicy(max_time_s=2.0), gpu.clock)
    assert out.stop == "timeout" and out.elapsed_s >= 2.0


def test_sample_budget_stops_short_kernels():
    gpu = SimGPU(5e-6, 0.05, overhead=1e-6)
    out = collect(gpu.sample, SamplingPolicy(max_samples=500, max_time_s=100), gpu.clock)
    assert out.stop == "max_samples" and len(out.samples) == 500


def test_min_samples_respected_for_long_kernels():
    gpu = SimGPU(0.2, 0.0001)
    out = collect(gpu.sample, SamplingPolicy(min_samples=10, min_time_s=0.5, max_time_s=100), gpu.clock)
    assert out.stop == "converged" and len(out.samples) == 10


def test_warmup_samples_are_not_recorded():
    gpu = SimGPU(1e-3, 0.001)
    out = collect(gpu.sample, SamplingPolicy(warmup=5), gpu.clock)
    assert gpu.count == len(out.samples) + 5


def test_throttled_samples_are_kept_but_excluded():
    gpu = SimGPU(1e-3, 0.001, throttle_every=4)
    out = collect(gpu.sample, SamplingPolicy(), gpu.clock)
    assert out.throttled_count > 0
    assert len(out.kept_seconds) == len(out.samples) - out.throttled_count
    # the throttled samples (clock 900 MHz) would not stop convergence, as they are not counted
    assert out.stop == "converged"


def test_stop_reason_is_pure():
    samples = [Sample(1e-3) for _ in range(20)]
    pol = SamplingPolicy()
    assert stop_reason(samples, 0.1, pol) is None  # min time not reached
    assert stop_reason(samples, 0.6, pol) == "converged"
    assert stop_reason(samples[:5], 0.6, pol) is None  # too few samples
    assert stop_reason(samples[:5], 11.0, pol) == "timeout"


def test_is_throttled():
    assert is_throttled(1000, 1980, 0.75)
    assert not is_throttled(1600, 1980, 0.75)
    assert not is_throttled(None, 1980, 0.75)


def test_policy_validation():
    with pytest.raises(ValueError):
        SamplingPolicy(min_samples=1)
    with pytest.raises(ValueError):
        SamplingPolicy(max_samples=5, min_samples=10)
