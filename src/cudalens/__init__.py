"""cudalens: the CUDA performance guidance, made executable.

Flow: evidence (source, compiled code, hardware, measurements, counters) -> facts -> rules -> findings
-> reports. Each sub-package is one step of that flow; see DESIGN notes in the README.

The Python API (:mod:`cudalens.api`, re-exported here; each function loads what it needs when called)::

    import cudalens
    report = cudalens.analyze("saxpy.cu")          # or cudalens.check(["src/"])
    for f in report.findings: ...
"""

import importlib as _importlib
import sys as _sys
import types as _types
from typing import TYPE_CHECKING, Any

from cudalens._version import __version__
from cudalens.errors import CudalensError, InputError, NoDeviceError

if TYPE_CHECKING:  # the names as type checkers see them; at run time they load on first use
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
    from cudalens.pipeline.measured import RunSpec

#: public name -> the module that defines it; loaded when first used, so ``import cudalens`` (and
#: every command, which reads ``__version__``) pays nothing for the API (RunSpec: numpy, tree-sitter)
_LAZY = {**{name: "cudalens.api" for name in ("Bench", "Occupancy", "Profile", "Report", "Tune", "analyze", "bench",
                                              "check", "occupancy", "profile", "tune")},
         "RunSpec": "cudalens.pipeline.measured"}
_API_NAMED = ("occupancy", "profile", "tune")


class _CallablePackage(_types.ModuleType):
    """A sub-package that shares its name with an API function (``cudalens.occupancy``,
    ``cudalens.profile``, ``cudalens.tune``): calling it calls that function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        api = _importlib.import_module("cudalens.api")
        return getattr(api, self.__name__.rpartition(".")[2])(*args, **kwargs)


class _Package(_types.ModuleType):
    """``cudalens`` itself: importing ``cudalens.occupancy`` (the package) binds it here, where the
    function ``cudalens.occupancy`` is looked up; the package is then made callable as the
    function, so ``cudalens.occupancy(256, 37)`` means one thing whatever was imported before."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _API_NAMED and isinstance(value, _types.ModuleType) and type(value) is _types.ModuleType:
            value.__class__ = _CallablePackage
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        if name not in _API_NAMED:  # a sub-package of that name, once imported, takes the attribute
            globals()[name] = value
        return value
    raise AttributeError(f"module 'cudalens' has no attribute {name!r}")


__all__ = ["Bench", "CudalensError", "InputError", "NoDeviceError", "Occupancy", "Profile", "Report", "RunSpec",
           "Tune", "__version__", "analyze", "bench", "check", "occupancy", "profile", "tune"]
