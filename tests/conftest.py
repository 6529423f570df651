"""Shared test set-up: the `gpu` marker skips with a reason when no NVIDIA GPU is usable."""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=1)
def gpu_available() -> tuple[bool, str]:
    try:
        from cuda.bindings import runtime as cudart  # type: ignore
    except Exception as exc:  # noqa: BLE001
        return False, f"cuda.bindings not importable ({type(exc).__name__})"
    try:
        err, count = cudart.cudaGetDeviceCount()
    except Exception as exc:  # noqa: BLE001
        return False, f"CUDA runtime not loadable ({type(exc).__name__})"
    if int(err) != 0 or count == 0:
        return False, "no NVIDIA GPU present"
    return True, ""


def pytest_collection_modifyitems(config, items):
    ok, why = gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
