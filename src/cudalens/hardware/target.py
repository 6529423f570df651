"""The target compute capability, resolved the same way by every command and API function.

In order: the ``--cc`` value (``cc=`` in Python) when given; else the ``cc`` key of the
``[tool.cudalens]`` configuration; else the compute capability of GPU 0 when one is present;
else :data:`DEFAULT_CC` (an H100's), so analysis works the same on a machine without a GPU.
The value says where it came from, for reports and notes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cudalens.hardware.table import limits

DEFAULT_CC = "9.0"
CC_HELP = "Target compute capability, e.g. 9.0 (default: [tool.cudalens] cc, else the GPU's, else 9.0)."


@dataclass(frozen=True)
class Target:
    cc: str  # "9.0", checked against the table
    origin: str  # "option" | "config" | "device" | "default"


def device_cc(index: int = 0) -> str | None:
    """The compute capability of GPU ``index``, or None when there is no GPU or driver."""
    try:
        from cudalens.hardware.live import CudaSource

        src = CudaSource(index)
        return f"{src.attribute('COMPUTE_CAPABILITY_MAJOR')}.{src.attribute('COMPUTE_CAPABILITY_MINOR')}"
    except Exception:  # noqa: BLE001 - no GPU, no driver, no bindings: the next source decides
        return None


def resolve_target(cc: str | None, config_cc: str | None = None,
                   probe: Callable[[], str | None] = device_cc) -> Target:
    """The target of ``cc`` (the option), the configuration's ``cc`` and the device, in that
    order; an unknown value is an InputError naming the known ones."""
    for value, origin in ((cc, "option"), (config_cc, "config")):
        if value is not None and str(value).strip():
            return Target(limits(value).cc, origin)
    found = probe()
    if found is not None:
        try:
            return Target(limits(found).cc, "device")
        except Exception:  # noqa: BLE001 - a GPU newer than the table: analyze for the default
            pass
    return Target(DEFAULT_CC, "default")


def resolve_cc(cc: str | None, config_cc: str | None = None,
               probe: Callable[[], str | None] = device_cc) -> str:
    """:func:`resolve_target`'s compute capability."""
    return resolve_target(cc, config_cc, probe).cc
