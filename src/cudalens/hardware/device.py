"""The one record of what a GPU is: the facts a run, a lab or a report needs about the device.

The harness (:func:`cudalens.measure.engine.device_info`), the labs' runner and the live device
report (:meth:`cudalens.hardware.live.DeviceReport.facts`) all describe the device they used with
:class:`DeviceFacts`; benchmark results and lab results serialize it. Clocks in MHz, sizes in bytes,
bandwidth in GB/s (10^9 B/s). A field nobody queried keeps its default (0, "" or None).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class DeviceFacts:
    """One GPU as the driver reports it (see the module docstring for units)."""

    name: str
    index: int = 0
    cc: str = ""  # "9.0"
    driver_version: str = ""
    cuda_version: str = ""
    sm_count: int = 0
    l2_bytes: int = 0
    mem_clock_mhz: float = 0.0
    bus_width_bits: int = 0
    max_sm_clock_mhz: float | None = None
    theoretical_bandwidth_gbs: float | None = None
    # queried by the labs' runner (None: not queried)
    max_persisting_l2_bytes: int | None = None
    max_threads_per_sm: int | None = None
    max_smem_per_block_optin: int | None = None
    integrated: bool | None = None
    can_map_host: bool | None = None
    async_engines: int | None = None

    @property
    def cc_tuple(self) -> tuple[int, int]:
        """The compute capability as (major, minor); (0, 0) when unknown."""
        major, _, minor = self.cc.partition(".")
        return (int(major), int(minor or 0)) if major.isdigit() else (0, 0)

    @property
    def arch(self) -> str:
        """The GPU architecture name nvcc and NVRTC take (``sm_90``)."""
        major, minor = self.cc_tuple
        return f"sm_{major}{minor}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DeviceFacts:
        """The record from a dict written by :meth:`to_dict` (unknown keys ignored, missing ones default)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

