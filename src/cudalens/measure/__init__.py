"""cudalens.measure: event timing, adaptive sampling, L2 flush, throttle detection, history.

Public API (imported lazily, so ``import cudalens.measure`` never needs a GPU):

- :func:`bench` (any callable that enqueues GPU work) and :func:`bench_kernel` (CUDA C++ through
  NVRTC) from :mod:`cudalens.measure.harness`;
- :class:`SamplingPolicy` (stopping rule, :mod:`cudalens.measure.sampling`);
- statistics and comparison in :mod:`cudalens.measure.stats`; history in :mod:`cudalens.measure.history`;
- :func:`run_isolated` (a measurement in a supervised child process, :mod:`cudalens.measure.isolate`).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "bench": "cudalens.measure.harness",
    "bench_kernel": "cudalens.measure.harness",
    "SamplingPolicy": "cudalens.measure.sampling",
    "Sample": "cudalens.measure.sampling",
    "summarize": "cudalens.measure.stats",
    "compare": "cudalens.measure.stats",
    "Ceilings": "cudalens.measure.throughput",
    "BenchResult": "cudalens.measure.result",
    "run_isolated": "cudalens.measure.isolate",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'cudalens.measure' has no attribute {name!r}")
