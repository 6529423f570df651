"""Shared test set-up: the `gpu` marker skips with a reason when no NVIDIA GPU is usable, the
``nvcc_toolchain`` fixture when no compiler is, and the suite runs in a private home."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from pathlib import Path

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


#: the one reason a test skips for want of a compiler (the ``nvcc_toolchain`` fixture)
NO_TOOLCHAIN = "no nvcc (wheel) or host compiler"


@pytest.fixture(scope="session")
def nvcc_toolchain():
    """The toolchain found (:func:`cudalens.compiled.toolchain.discover`) when it has nvcc and a host
    C++ compiler; otherwise the test skips with :data:`NO_TOOLCHAIN`."""
    from cudalens.compiled.toolchain import discover

    tc = discover()
    if "nvcc" not in tc.tools or tc.host_compiler is None:
        pytest.skip(NO_TOOLCHAIN)
    return tc


def pytest_collection_modifyitems(config, items):
    ok, why = gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# --------------------------------------------------------------------------------------------
# The suite leaves the user's home alone: every test runs with HOME, XDG_CACHE_HOME and the
# cudalens cache pointed at a private temporary directory of the session (shared by the tests,
# so compiled kernels stay cached between them). Subprocesses inherit the same environment.
# Under CI (or with CUDALENS_CHECK_HOME=1) the real home's cudalens paths are compared at the end
# of the session with their state at the start; any file the suite added there fails the run.
# (Off elsewhere: on a shared machine other processes may write there during the session.)

_REAL_HOME = os.path.expanduser("~")
_WATCHED = (".cudalens", ".cache/cudalens", ".cache/ms-playwright", ".cupy", ".nv")


def _home_snapshot() -> dict[str, tuple[str, ...]]:
    names = os.listdir(_REAL_HOME) if os.path.isdir(_REAL_HOME) else []
    out = {"": tuple(sorted(n for n in names if "cudalens" in n.lower()))}
    for rel in _WATCHED:
        top = os.path.join(_REAL_HOME, rel)
        files = []
        for dirpath, _dirs, names in os.walk(top):
            files.extend(os.path.relpath(os.path.join(dirpath, n), top) for n in names)
        out[rel] = tuple(sorted(files))
    return out


def pytest_sessionstart(session):
    if os.environ.get("CI") or os.environ.get("CUDALENS_CHECK_HOME") == "1":
        session.config._cudalens_home_before = _home_snapshot()


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "_cudalens_home_before", None)
    if before is None:
        return
    after = _home_snapshot()
    added = {k: sorted(set(after[k]) - set(before.get(k, ()))) for k in after}
    added = {k: v for k, v in added.items() if v}
    if added:
        where = "; ".join(f"{os.path.join(_REAL_HOME, k)}: {', '.join(v[:5])}" for k, v in added.items())
        session.config.get_terminal_writer().line(f"ERROR: the test suite wrote into the user's home: {where}", red=True)
        session.exitstatus = 1


_PRIVATE = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "CUDALENS_CACHE_DIR", "CUDALENS_NO_CACHE", "CUDALENS_CACHE_KEY")


def pytest_configure(config):
    """Before collection: modules imported while collecting (ray, for one) already see the private home."""
    root = tempfile.mkdtemp(prefix="cudalens-test-home-")
    os.makedirs(os.path.join(root, ".cache"))
    config._cudalens_private_home = root
    config._cudalens_saved_env = {k: os.environ.get(k) for k in _PRIVATE}
    os.environ.pop("CUDALENS_CACHE_KEY", None)
    os.environ.update({"HOME": root, "XDG_CACHE_HOME": os.path.join(root, ".cache"),
                       "XDG_CONFIG_HOME": os.path.join(root, ".config"),
                       "CUDALENS_CACHE_DIR": os.path.join(root, ".cache", "cudalens"),
                       # no result cache for check/analyze: a test that patches the analysis must not
                       # read another test's stored result (tests/pipeline/test_result_cache.py turns it on)
                       "CUDALENS_NO_CACHE": "1"})


def pytest_unconfigure(config):
    saved = getattr(config, "_cudalens_saved_env", None)
    if saved is None:
        return
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    shutil.rmtree(config._cudalens_private_home, ignore_errors=True)


@pytest.fixture(scope="session")
def _private_home(request):
    return Path(request.config._cudalens_private_home)


@pytest.fixture(autouse=True)
def _no_user_home(_private_home, monkeypatch):
    """HOME, XDG_CACHE_HOME, XDG_CONFIG_HOME and CUDALENS_CACHE_DIR point into the session's temporary home."""
    monkeypatch.setenv("HOME", str(_private_home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(_private_home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(_private_home / ".config"))
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(_private_home / ".cache" / "cudalens"))
    yield
