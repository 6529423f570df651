"""cudalens: the CUDA performance guidance, made executable.

Flow: evidence (source, compiled code, hardware, measurements, counters) -> facts -> rules -> findings
-> reports. Each sub-package is one step of that flow; see DESIGN notes in the README.

The Python API (:mod:`cudalens.api`, re-exported here; each function loads what it needs when called)::

    import cudalens
    report = cudalens.analyze("saxpy.cu")          # or cudalens.check(["src/"])
    for f in report.findings: ...
"""

import sys as _sys
import types as _types
from collections.abc import Callable
from typing import Any

from cudalens._version import __version__
from cudalens.api import (
    Bench,
    Occupancy,
    Profile,
    Report,
    Tune,
    analyze,
    bench,
    check,
    occupancy,
    profile,
    tune,
)
from cudalens.errors import CudalensError, InputError, NoDeviceError


class _CallablePackage(_types.ModuleType):
    """A sub-package that shares its name with an API function (``cudalens.occupancy``,
    ``cudalens.profile``, ``cudalens.tune``): calling it calls that function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _API_NAMED[self.__name__.rpartition(".")[2]](*args, **kwargs)


class _Package(_types.ModuleType):
    """``cudalens`` itself: importing ``cudalens.occupancy`` (the package) binds it here in place
    of the function ``cudalens.occupancy``; the package is then made callable as the function, so
    ``cudalens.occupancy(256, 37)`` means one thing whatever was imported before."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _API_NAMED and isinstance(value, _types.ModuleType) and type(value) is _types.ModuleType:
            value.__class__ = _CallablePackage
        super().__setattr__(name, value)


_API_NAMED: dict[str, Callable[..., Any]] = {"occupancy": occupancy, "profile": profile, "tune": tune}
_sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> object:
    """``cudalens.RunSpec`` (a launch for ``analyze(run=...)``), loaded on first use: the pipeline
    imports numpy and tree-sitter, which ``import cudalens`` (and every command) should not pay for."""
    if name == "RunSpec":
        from cudalens.pipeline.evidence import RunSpec

        return RunSpec
    raise AttributeError(f"module 'cudalens' has no attribute {name!r}")

__all__ = ["Bench", "CudalensError", "InputError", "NoDeviceError", "Occupancy", "Profile", "Report", "RunSpec",
           "Tune", "__version__", "analyze", "bench", "check", "occupancy", "profile", "tune"]
