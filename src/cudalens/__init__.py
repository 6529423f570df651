"""cudalens: the CUDA performance guidance, made executable.

Flow: evidence (source, compiled code, hardware, measurements, counters) -> facts -> rules -> findings
-> reports. Each sub-package is one step of that flow; see DESIGN notes in the README.

The Python API (:mod:`cudalens.api`, re-exported here; each function loads what it needs when called)::

    import cudalens
    report = cudalens.analyze("saxpy.cu")          # or cudalens.check(["src/"])
    for f in report.findings: ...
"""

__version__ = "0.1.0"

from cudalens.api import (  # noqa: E402 - after __version__, which the API's modules may read
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
from cudalens.errors import CudalensError, InputError, NoDeviceError  # noqa: E402


def __getattr__(name: str) -> object:
    """``cudalens.RunSpec`` (a launch for ``analyze(run=...)``), loaded on first use: the pipeline
    imports numpy and tree-sitter, which ``import cudalens`` (and every command) should not pay for."""
    if name == "RunSpec":
        from cudalens.pipeline.evidence import RunSpec

        return RunSpec
    raise AttributeError(f"module 'cudalens' has no attribute {name!r}")

__all__ = ["Bench", "CudalensError", "InputError", "NoDeviceError", "Occupancy", "Profile", "Report", "RunSpec",
           "Tune", "__version__", "analyze", "bench", "check", "occupancy", "profile", "tune"]
