"""pytest plugin: benchmark GPU code inside a test suite, with a regression gate.

Registered through the ``pytest11`` entry point, so installing cudalens makes it available::

    def test_saxpy_speed(cudalens_bench):
        r = cudalens_bench(lambda: saxpy(x, y), name="saxpy", bytes_read=8 * n, bytes_written=4 * n)
        assert r.summary.median < 1e-3

    def test_templated(cudalens_bench):
        cudalens_bench.kernel("reduce.cu", "reduce<float, 256>", grid, 256, args)

Options:

- ``--cudalens-save FILE``: store every benchmark's result (JSON: ``{"benchmarks": {id: result}}``,
  the same format ``cudalens compare`` reads);
- ``--cudalens-baseline FILE``: a stored file; a benchmark whose median is SLOWER than the
  baseline's beyond both confidence intervals, and by more than ``--cudalens-max-slowdown``
  (default 0 %), fails its test with the figures;
- a test that benchmarks on a machine without an NVIDIA GPU is skipped with the reason.

The timing itself comes from the fixture ``cudalens_runner`` (``bench`` and ``bench_kernel`` of
:mod:`cudalens.measure.harness`); a conftest can override it, e.g. with a fake for tests.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable

import pytest

_STORE_KEY = "_cudalens_store"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("cudalens", "GPU benchmarks (cudalens)")
    group.addoption("--cudalens-save", default=None, metavar="FILE", help="Store benchmark results in FILE (JSON).")
    group.addoption("--cudalens-baseline", default=None, metavar="FILE",
                    help="Fail a benchmark that is slower than FILE's beyond its confidence interval.")
    group.addoption("--cudalens-max-slowdown", default="0%", metavar="PCT",
                    help="Tolerated slowdown before the baseline gate fails (default 0%%).")


def pytest_configure(config: Any) -> None:
    setattr(config, _STORE_KEY, {})
    config.addinivalue_line("markers", "cudalens: a GPU benchmark (cudalens_bench fixture)")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    path = session.config.getoption("--cudalens-save", default=None)
    store = getattr(session.config, _STORE_KEY, {})
    if path and store:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"benchmarks": store}, fh, indent=1)
        os.replace(tmp, path)


class _Runner:
    """The real runner: the harness, with a GPU check that turns "no GPU" into a skip reason."""

    def available(self) -> str | None:
        try:
            from cudalens.hardware.cuda_driver import device_count  # noqa: PLC0415

            return None if device_count() > 0 else "no NVIDIA GPU present"
        except Exception as exc:  # noqa: BLE001 - NoDeviceError, missing driver library
            return f"no usable NVIDIA GPU ({exc})"

    def bench(self, fn: Callable[[], Any], **kw: Any) -> Any:
        from cudalens.measure.harness import bench  # noqa: PLC0415

        return bench(fn, **kw)

    def bench_kernel(self, *args: Any, **kw: Any) -> Any:
        from cudalens.measure.harness import bench_kernel  # noqa: PLC0415

        return bench_kernel(*args, **kw)


@pytest.fixture
def cudalens_runner() -> Any:
    """What times the benchmarks; override in a conftest to test without a GPU."""
    return _Runner()


def _baseline(config: Any) -> dict[str, Any] | None:
    path = config.getoption("--cudalens-baseline", default=None)
    if not path:
        return None
    cache = getattr(config, "_cudalens_baseline", None)
    if cache is None:
        from cudalens.measure.comparison import load_results  # noqa: PLC0415

        try:
            cache = dict(load_results(path))
        except Exception as exc:  # noqa: BLE001 - InputError: one clear line
            raise pytest.UsageError(f"--cudalens-baseline: {exc}") from None
        config._cudalens_baseline = cache
    return cache


class CudalensBench:
    """The ``cudalens_bench`` fixture's value: call it with a callable, or ``.kernel(...)``."""

    def __init__(self, request: Any, runner: Any) -> None:
        self.request, self.runner = request, runner
        self.results: list[Any] = []

    def _key(self, name: str | None) -> str:
        node = self.request.node.nodeid
        return node if not name else f"{node}::{name}"

    def _gate(self, key: str, result: Any) -> Any:
        why = self.runner.available()
        if why:  # pragma: no cover - the caller skipped before timing
            pytest.skip(why)
        config = self.request.config
        getattr(config, _STORE_KEY)[key] = result.to_dict()
        self.results.append(result)
        base = _baseline(config)
        if base is not None and key in base:
            from cudalens.measure.stats import compare, parse_percent  # noqa: PLC0415

            c = compare(base[key].kept_seconds, result.kept_seconds)
            limit = parse_percent(config.getoption("--cudalens-max-slowdown"))
            if c.verdict == "SLOWER" and c.slower_by > limit:
                pytest.fail(
                    f"{key}: {c.median_b * 1e6:.3f} us is {c.slower_by * 100:.2f} % slower than the baseline "
                    f"{c.median_a * 1e6:.3f} us (95 % CIs {c.ci_a[0] * 1e6:.3f}..{c.ci_a[1] * 1e6:.3f} and "
                    f"{c.ci_b[0] * 1e6:.3f}..{c.ci_b[1] * 1e6:.3f} us do not overlap)", pytrace=False)
        return result

    def _skip_without_gpu(self) -> None:
        why = self.runner.available()
        if why:
            pytest.skip(f"cudalens benchmark needs a GPU: {why}")

    def __call__(self, fn: Callable[[], Any], *, name: str | None = None, **kw: Any) -> Any:
        self._skip_without_gpu()
        return self._gate(self._key(name), self.runner.bench(fn, name=name, **kw))

    def kernel(self, source: str, kernel: str, grid: Any, block: Any, args: Any, *rest: Any,
               name: str | None = None, **kw: Any) -> Any:
        self._skip_without_gpu()
        return self._gate(self._key(name or kernel), self.runner.bench_kernel(source, kernel, grid, block, args,
                                                                              *rest, **kw))


@pytest.fixture
def cudalens_bench(request: Any, cudalens_runner: Any) -> CudalensBench:
    """Benchmark a callable (``cudalens_bench(fn, ...)``) or a kernel (``cudalens_bench.kernel(...)``)."""
    return CudalensBench(request, cudalens_runner)
