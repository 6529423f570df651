"""The pytest plugin with a fake runner: fixture, stored results, the baseline gate, the GPU skip."""

import json

import pytest

pytest_plugins = ["pytester"]

CONFTEST = '''
import zlib

import numpy as np
import pytest

from cudalens.measure.result import BenchResult
from cudalens.hardware.device import DeviceFacts
from cudalens.measure.sampling import Sample
from cudalens.measure.stats import summarize

MEDIANS = {"slow": 150e-6}


def fake(name, median):
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # same name, same samples
    secs = median * (1 + 0.002 * rng.standard_normal(40))
    samples = tuple(Sample(float(s)) for s in secs)
    return BenchResult(kernel=name, mode="hot", device=DeviceFacts(name="Fake"), config={}, samples=samples,
                       stop_reason="converged", summary=summarize(list(secs)))


class FakeRunner:
    def __init__(self, gpu):
        self.gpu = gpu
        self.calls = []

    def available(self):
        return None if self.gpu else "no NVIDIA GPU present"

    def bench(self, fn, name=None, **kw):
        fn()
        self.calls.append(name)
        return fake(name or "fn", MEDIANS.get(name, 100e-6))

    def bench_kernel(self, source, kernel, *a, **kw):
        return fake(kernel, 50e-6)


@pytest.fixture
def cudalens_runner(request):
    return FakeRunner(gpu=request.config.getoption("--fake-gpu", default="yes") == "yes")


def pytest_addoption(parser):
    parser.addoption("--fake-gpu", default="yes")
'''

TESTS = '''
def test_fast(cudalens_bench):
    ran = []
    r = cudalens_bench(lambda: ran.append(1), name="fast")
    assert ran == [1] and r.summary.median > 0

def test_slow(cudalens_bench):
    cudalens_bench(lambda: None, name="slow")

def test_kernel(cudalens_bench):
    cudalens_bench.kernel("k.cu", "ns::k<float, 128>", 1, 128, [])
'''


def test_plugin_is_registered_through_the_entry_point(pytester):
    pytester.makepyfile(test_x="def test_has(cudalens_bench):\n    assert callable(cudalens_bench)\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(skipped=0, passed=1)


def test_results_are_stored_and_the_baseline_gate_fails_a_slower_benchmark(pytester, tmp_path):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_b=TESTS)
    store = tmp_path / "base.json"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--cudalens-save={store}").assert_outcomes(passed=3)
    data = json.loads(store.read_text())["benchmarks"]
    assert set(data) == {"test_b.py::test_fast::fast", "test_b.py::test_slow::slow",
                         "test_b.py::test_kernel::ns::k<float, 128>"}
    assert data["test_b.py::test_slow::slow"]["summary"]["median"] == pytest.approx(150e-6, rel=0.01)
    # the baseline's "slow" was 100 us; now it takes 150 us: that test fails, the others pass
    base = json.loads(store.read_text())
    base["benchmarks"]["test_b.py::test_slow::slow"] = base["benchmarks"]["test_b.py::test_fast::fast"]
    store.write_text(json.dumps(base))
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--cudalens-baseline={store}")
    res.assert_outcomes(passed=2, failed=1)
    res.stdout.fnmatch_lines(["*test_slow::slow: 150.* us is [45]?.* % slower than the baseline 100.* us*"])
    # tolerated slowdown: passes
    pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--cudalens-baseline={store}",
                       "--cudalens-max-slowdown=60%").assert_outcomes(passed=3)


def test_benchmarks_skip_with_the_reason_without_a_gpu(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_b=TESTS)
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--fake-gpu=no", "-rs")
    res.assert_outcomes(skipped=3)
    res.stdout.fnmatch_lines(["*cudalens benchmark needs a GPU: no NVIDIA GPU present*"])


def test_real_runner_skips_here_when_there_is_no_gpu(pytester):
    pytester.makepyfile(test_r="def test_r(cudalens_bench):\n    cudalens_bench(lambda: None)\n")
    from cudalens.pytest_plugin import _Runner

    why = _Runner().available()
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    if why:  # CI and this machine: skipped with the reason, never an error
        res.assert_outcomes(skipped=1)
    else:  # pragma: no cover - on a GPU machine the callable is timed
        res.assert_outcomes(passed=1)


def test_a_bad_baseline_file_is_a_usage_error(pytester, tmp_path):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_b=TESTS)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--cudalens-baseline={bad}")
    assert res.ret != 0
    res.stdout.fnmatch_lines(["*--cudalens-baseline*no cudalens results*"])
