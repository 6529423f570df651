"""NVML for the timing engine: clock readings of the timed device, and work on the *other* devices.

Two small objects over nvidia-ml-py (``pynvml``), each of which says when it cannot read:

- :class:`Nvml`: SM and memory clocks, throttle reasons and the driver version of one device
  (``Nvml.open`` returns None when NVML is unusable: clocks unknown, no throttle detection);
- :class:`OtherDevicesWatch`: *work on other devices during the samples*. A callable under test may
  launch part of its work on another GPU; the events and the context-synchronize wait of the timed
  device never see it. NVML does: ``nvmlDeviceGetComputeRunningProcesses`` lists the processes with
  a context on each device, and ``nvmlDeviceGetProcessUtilization`` returns per-process SM
  utilization samples taken after a given CPU timestamp. The watch notes the time when sampling
  starts and, when it ends, asks every other device for this process's samples since then: an SM
  utilization above zero on another device is work of ours there, and the run is not trusted.

  Limit: NVML samples utilization over periods of about 1/6 to 1 s and reports whole percent, so
  work on another device that keeps its SMs busy for less than about 1 % of such a period is not
  seen; a callable that moves its whole work there is.

  The check is reported as *not checked*, with the reason, when it cannot be made: NVML missing,
  a device that has no per-process utilization, or NVML not listing this process on its own device
  (a PID namespace: NVML's PIDs are the host's). With one device there is nothing to watch; the
  check passes and says so.

The device-status *source* is injected (:class:`NvmlSource` on a real machine, a fake in tests):
:func:`judge_other_devices` is a pure function of what the source returned.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Protocol, Sequence


def cuda_bus_id(index: int) -> str:
    """PCI bus id of CUDA device ``index`` as the driver writes it (e.g. ``0000:3B:00.0``)."""
    from cudalens.hardware import cuda_driver as cu  # noqa: PLC0415

    raw = cu.check(cu._driver().cuDeviceGetPCIBusId(32, cu.cu_device(index)), "cuDeviceGetPCIBusId")
    raw = raw.split(b"\0", 1)[0] if isinstance(raw, bytes) else raw
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class Nvml:
    """SM clock readings through nvidia-ml-py; ``open`` returns None when NVML is unusable."""

    def __init__(self, mod: Any, handle: Any) -> None:
        self.mod, self.handle = mod, handle

    @classmethod
    def open(cls, index: int) -> "Nvml | None":
        try:
            import pynvml  # noqa: PLC0415

            pynvml.nvmlInit()
            try:
                handle = pynvml.nvmlDeviceGetHandleByPciBusId(cuda_bus_id(index).encode())
            except Exception:  # noqa: BLE001 - fall back to the index
                handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            return cls(pynvml, handle)
        except Exception:  # noqa: BLE001 - no NVML: clocks unknown, no throttle detection
            return None

    def _clock(self, call: str, domain: str) -> float | None:
        """MHz from ``nvmlDeviceGet<call>(handle, NVML_CLOCK_<domain>)``; None when NVML cannot say."""
        try:
            return float(getattr(self.mod, call)(self.handle, getattr(self.mod, f"NVML_CLOCK_{domain}")))
        except Exception:  # noqa: BLE001
            return None

    def sm_clock(self) -> float | None:
        return self._clock("nvmlDeviceGetClockInfo", "SM")

    def max_sm_clock(self) -> float | None:
        return self._clock("nvmlDeviceGetMaxClockInfo", "SM")

    def mem_clock(self) -> float | None:
        return self._clock("nvmlDeviceGetClockInfo", "MEM")

    def throttle_reasons(self) -> list[str]:
        """Names of the active clock-event (throttle) reasons, e.g. ["SwPowerCap"]; [] when none
        (decoded by hardware.live, the one table of NVML's reason bits)."""
        from cudalens.hardware.live import decode_clock_event_reasons  # noqa: PLC0415

        for call in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            try:
                return list(decode_clock_event_reasons(int(getattr(self.mod, call)(self.handle))))
            except Exception:  # noqa: BLE001 - older or newer NVML: try the other name
                continue
        return ["unknown"]

    def driver_version(self) -> str:
        try:
            v = self.mod.nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else str(v)
        except Exception:  # noqa: BLE001
            return ""


# ---------------------------------------------------------------------------- other devices

@dataclass(frozen=True)
class DeviceReading:
    """What the source said about one device for this process. ``sm_util`` are this process's SM
    utilization samples (percent) since the watch started; None when the device cannot say."""

    index: int
    has_context: bool | None  # this process listed among the device's compute processes
    sm_util: tuple[int, ...] | None
    why_not: str = ""


class DeviceStatusSource(Protocol):
    """Where the watch reads device status from (NVML on a machine; a fake in tests)."""

    def device_indexes(self) -> Sequence[int]: ...

    def now_us(self) -> int: ...

    def reading(self, index: int, pid: int, since_us: int) -> DeviceReading: ...


class NvmlSource:
    """:class:`DeviceStatusSource` over pynvml. NVML indexes devices in PCI order; the timed
    device is matched by its PCI bus id (``own_bus_id``), not by its CUDA index."""

    def __init__(self, mod: Any) -> None:
        self.mod = mod

    @classmethod
    def open(cls) -> "NvmlSource | None":
        try:
            import pynvml  # noqa: PLC0415

            pynvml.nvmlInit()
            return cls(pynvml)
        except Exception:  # noqa: BLE001 - no NVML
            return None

    def device_indexes(self) -> Sequence[int]:
        return range(int(self.mod.nvmlDeviceGetCount()))

    def now_us(self) -> int:
        return int(time.time() * 1e6)  # NVML's sample timestamps are CPU time in microseconds

    def bus_id(self, index: int) -> str:
        info = self.mod.nvmlDeviceGetPciInfo(self.mod.nvmlDeviceGetHandleByIndex(index))
        raw = info.busId
        return (raw.decode() if isinstance(raw, bytes) else str(raw)).upper()

    def reading(self, index: int, pid: int, since_us: int) -> DeviceReading:
        mod = self.mod
        try:
            handle = mod.nvmlDeviceGetHandleByIndex(index)
        except Exception as exc:  # noqa: BLE001
            return DeviceReading(index, None, None, f"no NVML handle ({type(exc).__name__})")
        try:
            procs = mod.nvmlDeviceGetComputeRunningProcesses(handle)
            has_context: bool | None = any(int(p.pid) == pid for p in procs)
        except Exception:  # noqa: BLE001
            has_context = None
        try:
            samples = mod.nvmlDeviceGetProcessUtilization(handle, since_us)
        except mod.NVMLError as exc:
            if getattr(exc, "value", None) in (getattr(mod, "NVML_ERROR_NOT_FOUND", -1), 0):
                samples = []  # no process ran on the device since ``since_us``
            else:
                return DeviceReading(index, has_context, None, f"no per-process utilization ({exc})")
        except Exception as exc:  # noqa: BLE001
            return DeviceReading(index, has_context, None, f"no per-process utilization ({type(exc).__name__})")
        util = tuple(int(s.smUtil) for s in samples if int(s.pid) == pid and int(s.timeStamp) >= since_us)
        return DeviceReading(index, has_context, util)


def judge_other_devices(own: DeviceReading | None, others: Sequence[DeviceReading],
                        source_missing: str = "") -> dict[str, Any]:
    """The ``other_devices`` check from the readings (pure). ``found`` lists the devices where this
    process used SMs during the samples; ``checked`` is False, with ``reason``, when it could not
    be told (no source, no per-process readings, or this process unseen on its own device)."""
    if source_missing:
        return {"checked": False, "ok": True, "reason": f"work on other devices not checked: {source_missing}"}
    if not others:
        return {"checked": True, "ok": True, "other_devices": 0, "found": [], "note": "no other device"}
    if own is not None and own.has_context is False:
        return {"checked": False, "ok": True, "other_devices": len(others),
                "reason": "work on other devices not checked: NVML does not list this process on the timed "
                          "device (its process ids are not this process's: a PID namespace?)"}
    found = [r.index for r in others if r.sm_util and max(r.sm_util) > 0]
    blind = [r for r in others if r.sm_util is None and r.has_context is not False]
    out: dict[str, Any] = {"checked": not blind or bool(found), "ok": not found, "other_devices": len(others),
                           "found": found,
                           "with_context": [r.index for r in others if r.has_context]}
    if found:
        peak = max(max(r.sm_util or (0,)) for r in others if r.index in found)
        out["reason"] = (f"this process used the SMs of device(s) {', '.join(map(str, found))} during the samples "
                         f"(NVML, up to {peak} %): work moved to another device is not in the time")
    elif blind:
        out["reason"] = ("work on other devices not checked for device(s) "
                         + ", ".join(f"{r.index} ({r.why_not})" for r in blind))
    return out


class OtherDevicesWatch:
    """``start()`` before the samples, ``finish()`` after: the ``other_devices`` check."""

    def __init__(self, cuda_index: int, source: Any = None, pid: int | None = None,
                 own_bus_id: str | None = None) -> None:
        self.source = source if source is not None else NvmlSource.open()
        self.cuda_index = cuda_index
        self.own_bus_id = (own_bus_id or "").upper()
        self.pid = os.getpid() if pid is None else pid
        self.since_us = 0

    def start(self) -> None:
        if self.source is not None:
            self.since_us = int(self.source.now_us())

    def _own_index(self, indexes: Sequence[int]) -> int | None:
        bus = getattr(self.source, "bus_id", None)
        if bus is None:
            return None
        if not self.own_bus_id:
            self.own_bus_id = cuda_bus_id(self.cuda_index).upper()
        for i in indexes:
            try:
                if bus(i).endswith(self.own_bus_id[-12:]):  # NVML pads the domain to 8 digits
                    return i
            except Exception:  # noqa: BLE001
                continue
        return None

    def finish(self) -> dict[str, Any]:
        if self.source is None:
            return judge_other_devices(None, (), source_missing="NVML is not available")
        try:
            indexes = list(self.source.device_indexes())
            own_i = self._own_index(indexes) if len(indexes) > 1 else (indexes[0] if indexes else None)
            if own_i is None and len(indexes) > 1:
                return judge_other_devices(None, (), source_missing="the timed device was not found in NVML")
            readings = {i: self.source.reading(i, self.pid, self.since_us) for i in indexes}
        except Exception as exc:  # noqa: BLE001 - NVML failing half-way: say so, do not fail the run
            return judge_other_devices(None, (), source_missing=f"NVML failed ({type(exc).__name__})")
        own = readings.pop(own_i) if own_i is not None else None
        return judge_other_devices(own, list(readings.values()))
