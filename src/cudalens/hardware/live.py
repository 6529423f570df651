"""Live device query: what this GPU says about itself, each value labelled with where it came from.

Two sources are read:

- the CUDA driver's attribute queries (``cuDeviceGetAttribute``). CUDA 13 removed ``clockRate``
  and ``memoryClockRate`` from ``cudaDeviceProp``; the attributes still return them.
- NVML (``nvidia-ml-py``): the clocks *now* and their maxima, application clocks, ECC, power,
  temperature, the reasons clocks are held down, the PCIe link and the driver version.

:func:`query_device` returns a frozen :class:`DeviceReport`. Every value is a :class:`Reading`
with its unit and source; a query that fails gives ``value=None`` and a note saying why, so one
unsupported NVML call never hides the rest. No GPU or no driver raises NoDeviceError.

The sources are small objects (``CudaSource``, and the ``pynvml`` module itself) so tests can pass
fakes: ``query_device(0, cuda=FakeCuda(...), nvml=FakeNvml(...))``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from cudalens.errors import CudalensError, InputError
from cudalens.hardware.device import DeviceFacts
from cudalens.hardware.theory import (
    MemoryBandwidth,
    PcieBandwidth,
    memory_bandwidth,
    pcie_bandwidth,
)
from cudalens.hardware.throughput import Peak, peaks


@dataclass(frozen=True)
class Reading:
    """One value of the report: ``value`` None means the query failed (``note`` says why)."""

    key: str
    label: str
    value: Any
    unit: str  # "" when dimensionless
    source: str  # the exact call, e.g. "cuDeviceGetAttribute(CLOCK_RATE)" or "NVML ..."
    note: str = ""


# (key, label, driver attribute short name, unit, converter)
_ATTRIBUTES: tuple[tuple[str, str, str, str, Callable[[int], Any]], ...] = (
    ("sm_count", "Multiprocessors (SMs)", "MULTIPROCESSOR_COUNT", "SMs", int),
    ("clock_rate_khz", "SM clock, peak", "CLOCK_RATE", "kHz", int),
    ("memory_clock_rate_khz", "Memory clock, peak", "MEMORY_CLOCK_RATE", "kHz", int),
    ("memory_bus_width_bits", "Memory bus width", "GLOBAL_MEMORY_BUS_WIDTH", "bit", int),
    ("l2_cache_bytes", "L2 cache size", "L2_CACHE_SIZE", "B", int),
    ("max_persisting_l2_bytes", "L2 persisting max", "MAX_PERSISTING_L2_CACHE_SIZE", "B", int),
    ("smem_per_sm_bytes", "Shared memory per SM", "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", "B", int),
    ("smem_per_block_bytes", "Shared memory per block (default)",
     "MAX_SHARED_MEMORY_PER_BLOCK", "B", int),
    ("smem_per_block_optin_bytes", "Shared memory per block (opt-in)",
     "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", "B", int),
    ("reserved_smem_per_block_bytes", "Reserved shared memory per block",
     "RESERVED_SHARED_MEMORY_PER_BLOCK", "B", int),
    ("regs_per_sm", "Registers per SM", "MAX_REGISTERS_PER_MULTIPROCESSOR", "32-bit registers", int),
    ("regs_per_block", "Registers per block", "MAX_REGISTERS_PER_BLOCK", "32-bit registers", int),
    ("max_threads_per_sm", "Max threads per SM", "MAX_THREADS_PER_MULTIPROCESSOR", "threads", int),
    ("max_threads_per_block", "Max threads per block", "MAX_THREADS_PER_BLOCK", "threads", int),
    ("max_blocks_per_sm", "Max blocks per SM", "MAX_BLOCKS_PER_MULTIPROCESSOR", "blocks", int),
    ("warp_size", "Warp size", "WARP_SIZE", "threads", int),
    ("total_constant_bytes", "Constant memory", "TOTAL_CONSTANT_MEMORY", "B", int),
    ("async_engines", "Async copy engines", "ASYNC_ENGINE_COUNT", "engines", int),
    ("concurrent_kernels", "Concurrent kernels", "CONCURRENT_KERNELS", "", bool),
    ("ecc_enabled", "ECC enabled", "ECC_ENABLED", "", bool),
    ("integrated", "Integrated GPU", "INTEGRATED", "", bool),
    ("pci_domain", "PCI domain", "PCI_DOMAIN_ID", "", int),
    ("pci_bus", "PCI bus", "PCI_BUS_ID", "", int),
    ("pci_device", "PCI device", "PCI_DEVICE_ID", "", int),
)

# NVML "clocks event reasons" (formerly "throttle reasons"): bit -> name, as in nvml.h.
CLOCK_EVENT_REASONS: tuple[tuple[int, str, str], ...] = (
    (0x001, "GpuIdle", "nothing running: clocks are low on purpose"),
    (0x002, "ApplicationsClocksSetting", "application clocks set below the maximum"),
    (0x004, "SwPowerCap", "software power cap: power draw reached the limit"),
    (0x008, "HwSlowdown", "hardware slowdown (thermal or power brake) active"),
    (0x010, "SyncBoost", "held down to match other GPUs of a sync-boost group"),
    (0x020, "SwThermalSlowdown", "software thermal slowdown: temperature too high"),
    (0x040, "HwThermalSlowdown", "hardware thermal slowdown: temperature too high"),
    (0x080, "HwPowerBrakeSlowdown", "external power brake (e.g. power supply) asserted"),
    (0x100, "DisplayClockSetting", "clocks set by the display driver"),
)
_BENIGN_REASONS = frozenset({"GpuIdle"})


def decode_clock_event_reasons(mask: int) -> tuple[str, ...]:
    """Names of the bits set in an NVML clocks-event-reasons mask; unknown bits as hex.

    >>> decode_clock_event_reasons(0x5)
    ('GpuIdle', 'SwPowerCap')
    """
    mask = int(mask)
    names = [name for bit, name, _ in CLOCK_EVENT_REASONS if mask & bit]
    unknown = mask & ~sum(bit for bit, _, _ in CLOCK_EVENT_REASONS)
    if unknown:
        names.append(f"unknown(0x{unknown:x})")
    return tuple(names)


def is_throttled(reasons: tuple[str, ...]) -> bool:
    """True when a reason other than "idle" holds the clocks down (a timing would be suspect)."""
    return any(r not in _BENIGN_REASONS for r in reasons)


@dataclass(frozen=True)
class DeviceReport:
    """Everything the live query found about one device."""

    index: int
    name: str | None
    cc: str | None  # "9.0"
    total_memory_bytes: int | None
    cuda_driver_version: str | None  # "13.0"
    attributes: tuple[Reading, ...]
    nvml: tuple[Reading, ...]
    memory_bandwidth: MemoryBandwidth | None
    pcie_current: PcieBandwidth | None  # the link as trained now (may be lower at idle)
    pcie_max: PcieBandwidth | None  # the best the GPU and slot support together
    peaks: tuple[Peak, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def reading(self, key: str) -> Reading:
        for r in (*self.attributes, *self.nvml):
            if r.key == key:
                return r
        raise KeyError(key)

    def value(self, key: str) -> Any:
        """The value of reading ``key`` (None if the query failed)."""
        return self.reading(key).value

    @property
    def sm_count(self) -> int | None:
        return self.value("sm_count")

    @property
    def sm_clock_hz(self) -> float | None:
        """Peak SM clock from the attribute (kHz x 1000)."""
        khz = self.value("clock_rate_khz")
        return None if khz is None else khz * 1e3

    @property
    def clock_event_reasons(self) -> tuple[str, ...] | None:
        return self.value("clocks_event_reasons")

    def facts(self) -> DeviceFacts:
        """The device-facts record of this device (what a run or a lab records about it)."""
        def get(key: str, default: Any = None) -> Any:
            try:
                v = self.value(key)
            except KeyError:
                return default
            return default if v is None else v

        mem_khz = get("memory_clock_rate_khz", 0)
        sm_max = get("sm_clock_max_mhz")
        return DeviceFacts(
            name=self.name or "", index=self.index, cc=self.cc or "", driver_version=str(get("driver_version", "")),
            cuda_version=self.cuda_driver_version or "", sm_count=get("sm_count", 0),
            l2_bytes=get("l2_cache_bytes", 0), mem_clock_mhz=mem_khz / 1e3,
            bus_width_bits=get("memory_bus_width_bits", 0),
            max_sm_clock_mhz=None if sm_max is None else float(sm_max),
            theoretical_bandwidth_gbs=self.memory_bandwidth.gb_per_s if self.memory_bandwidth else None,
            max_persisting_l2_bytes=get("max_persisting_l2_bytes"), max_threads_per_sm=get("max_threads_per_sm"),
            max_smem_per_block_optin=get("smem_per_block_optin_bytes"), integrated=get("integrated"),
            async_engines=get("async_engines"),
        )

    def to_dict(self) -> dict:
        return asdict(self)


class CudaSource:
    """Attribute queries through the CUDA driver API (cuda.bindings) for device ``index``."""

    def __init__(self, index: int) -> None:
        from cudalens.hardware import cuda_driver as cuda_util  # noqa: PLC0415

        self._u = cuda_util
        self.device = cuda_util.cu_device(index)  # NoDeviceError / InputError

    def name(self) -> str:
        from cuda.bindings import driver  # noqa: PLC0415

        raw = self._u.check(driver.cuDeviceGetName(256, self.device), "cuDeviceGetName")
        return raw.split(b"\0", 1)[0].decode() if isinstance(raw, bytes) else str(raw)

    def total_memory(self) -> int:
        from cuda.bindings import driver  # noqa: PLC0415

        return int(self._u.check(driver.cuDeviceTotalMem(self.device), "cuDeviceTotalMem"))

    def attribute(self, short_name: str) -> int:
        return self._u.device_attribute(self.device, short_name)

    def driver_version(self) -> int:
        return self._u.driver_version()


def _try(fn: Callable[[], Any]) -> tuple[Any, str]:
    try:
        return fn(), ""
    except Exception as exc:  # noqa: BLE001 - one failed query must not hide the others
        text = str(exc).strip() or type(exc).__name__
        return None, f"query failed: {text}"


def _open_nvml(nvml: Any, cuda_pci: tuple[int, int, int] | None, index: int) -> tuple[Any, str]:
    """(handle, note): the NVML handle of the same device CUDA calls ``index``."""
    try:
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001
        return None, f"NVML unavailable: {str(exc).strip() or type(exc).__name__}"
    if cuda_pci is not None and all(v is not None for v in cuda_pci):
        bus_id = "{:08x}:{:02x}:{:02x}.0".format(*cuda_pci)
        try:
            return nvml.nvmlDeviceGetHandleByPciBusId(bus_id), ""
        except Exception:  # noqa: BLE001 - fall back to the index (same order unless remapped)
            pass
    try:
        return nvml.nvmlDeviceGetHandleByIndex(index), "NVML device matched by index, not PCI id"
    except Exception as exc:  # noqa: BLE001
        return None, f"NVML has no device {index}: {exc}"


def _nvml_readings(nvml: Any, handle: Any, why_none: str) -> tuple[Reading, ...]:
    def clock(kind: str, which: str) -> Callable[[], Any]:
        fn = {"current": "nvmlDeviceGetClockInfo", "max": "nvmlDeviceGetMaxClockInfo",
              "app_default": "nvmlDeviceGetDefaultApplicationsClock"}[which]
        const = getattr(nvml, f"NVML_CLOCK_{kind}", None)
        return lambda: int(getattr(nvml, fn)(handle, const))

    def reasons() -> tuple[str, ...]:
        fn = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
        return decode_clock_event_reasons(fn(handle))

    def driver() -> str:
        v = nvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else str(v)

    specs: tuple[tuple[str, str, str, str, Callable[[], Any]], ...] = (
        ("driver_version", "Driver version", "", "nvmlSystemGetDriverVersion", driver),
        ("sm_clock_current_mhz", "SM clock, now", "MHz", "nvmlDeviceGetClockInfo(SM)",
         clock("SM", "current")),
        ("sm_clock_max_mhz", "SM clock, max", "MHz", "nvmlDeviceGetMaxClockInfo(SM)",
         clock("SM", "max")),
        ("mem_clock_current_mhz", "Memory clock, now", "MHz", "nvmlDeviceGetClockInfo(MEM)",
         clock("MEM", "current")),
        ("mem_clock_max_mhz", "Memory clock, max", "MHz", "nvmlDeviceGetMaxClockInfo(MEM)",
         clock("MEM", "max")),
        ("app_sm_clock_default_mhz", "Application SM clock, default", "MHz",
         "nvmlDeviceGetDefaultApplicationsClock(SM)", clock("SM", "app_default")),
        ("app_mem_clock_default_mhz", "Application memory clock, default", "MHz",
         "nvmlDeviceGetDefaultApplicationsClock(MEM)", clock("MEM", "app_default")),
        ("ecc_mode_current", "ECC mode (current)", "", "nvmlDeviceGetEccMode",
         lambda: bool(nvml.nvmlDeviceGetEccMode(handle)[0])),
        ("power_draw_w", "Power draw", "W", "nvmlDeviceGetPowerUsage (mW / 1000)",
         lambda: nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0),
        ("power_limit_w", "Power limit (enforced)", "W",
         "nvmlDeviceGetEnforcedPowerLimit (mW / 1000)",
         lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0),
        ("temperature_c", "GPU temperature", "degC", "nvmlDeviceGetTemperature(GPU)",
         lambda: int(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))),
        ("clocks_event_reasons", "Clock event (throttle) reasons", "",
         "nvmlDeviceGetCurrentClocksEventReasons", reasons),
        ("pcie_gen_current", "PCIe generation, now", "", "nvmlDeviceGetCurrPcieLinkGeneration",
         lambda: int(nvml.nvmlDeviceGetCurrPcieLinkGeneration(handle))),
        ("pcie_gen_max", "PCIe generation, max", "", "nvmlDeviceGetMaxPcieLinkGeneration",
         lambda: int(nvml.nvmlDeviceGetMaxPcieLinkGeneration(handle))),
        ("pcie_width_current", "PCIe width, now", "lanes", "nvmlDeviceGetCurrPcieLinkWidth",
         lambda: int(nvml.nvmlDeviceGetCurrPcieLinkWidth(handle))),
        ("pcie_width_max", "PCIe width, max", "lanes", "nvmlDeviceGetMaxPcieLinkWidth",
         lambda: int(nvml.nvmlDeviceGetMaxPcieLinkWidth(handle))),
    )
    out = []
    for key, label, unit, call, fn in specs:
        source = f"NVML {call}"
        if handle is None:
            out.append(Reading(key, label, None, unit, source, why_none))
            continue
        value, note = _try(fn)
        out.append(Reading(key, label, value, unit, source, note))
    return tuple(out)


def _pcie(gen: Any, width: Any) -> PcieBandwidth | None:
    if not gen or not width:
        return None
    try:
        return pcie_bandwidth(int(gen), int(width))
    except InputError:
        return None


def query_device(index: int = 0, *, cuda: Any = None, nvml: Any = None) -> DeviceReport:
    """Query device ``index`` through the CUDA driver and NVML.

    ``cuda`` defaults to :class:`CudaSource` (raises NoDeviceError without a GPU/driver, InputError
    for a bad index); ``nvml`` defaults to the ``pynvml`` module (if it is missing, every NVML
    reading is None with a note). NVML is shut down again before returning.
    """
    if cuda is None:
        cuda = CudaSource(index)
    if nvml is None:
        try:
            import pynvml  # noqa: PLC0415

            nvml = pynvml
        except ImportError:
            nvml = None

    def attr_reading(key: str, label: str, short: str, unit: str, conv: Callable) -> Reading:
        value, note = _try(lambda: conv(cuda.attribute(short)))
        return Reading(key, label, value, unit, f"cuDeviceGetAttribute({short})", note)

    attributes = [attr_reading(*spec) for spec in _ATTRIBUTES]
    by_key = {r.key: r.value for r in attributes}
    major, _ = _try(lambda: cuda.attribute("COMPUTE_CAPABILITY_MAJOR"))
    minor, _ = _try(lambda: cuda.attribute("COMPUTE_CAPABILITY_MINOR"))
    cc = f"{major}.{minor}" if major is not None and minor is not None else None
    threads, warp = by_key.get("max_threads_per_sm"), by_key.get("warp_size")
    attributes.append(Reading(
        "max_warps_per_sm", "Max warps per SM", threads // warp if threads and warp else None,
        "warps", "derived: max threads per SM / warp size",
        "" if threads and warp else "inputs missing"))

    name, _ = _try(cuda.name)
    total, _ = _try(cuda.total_memory)
    drv_version, _ = _try(cuda.driver_version)
    notes: list[str] = []

    if nvml is None:
        handle, why = None, "NVML unavailable: nvidia-ml-py is not installed"
    else:
        ids = [by_key.get(k) for k in ("pci_domain", "pci_bus", "pci_device")]
        dom, bus, dev = (int(v) if v is not None else None for v in ids)
        pci = (dom, bus, dev) if dom is not None and bus is not None and dev is not None else None
        handle, why = _open_nvml(nvml, pci, index)
    nvml_readings = _nvml_readings(nvml, handle, why)
    if why and handle is not None:
        notes.append(why)
    if handle is not None:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    nv = {r.key: r.value for r in nvml_readings}

    mem_khz, bus = by_key.get("memory_clock_rate_khz"), by_key.get("memory_bus_width_bits")
    mem_bw = memory_bandwidth(mem_khz * 1e3, bus) if mem_khz and bus else None
    if mem_bw is None:
        notes.append("theoretical memory bandwidth unknown: memory clock or bus width missing")
    if by_key.get("ecc_enabled"):
        notes.append("ECC is on: on GDDR parts ECC costs part of the usable bandwidth (BPG 8.2.1)")

    peak_list: tuple[Peak, ...] = ()
    sms, clk = by_key.get("sm_count"), by_key.get("clock_rate_khz")
    if cc and sms and clk:
        try:
            peak_list = peaks(cc, sms, clk * 1e3)
        except CudalensError as exc:
            notes.append(f"no throughput table for CC {cc}: {exc}")

    cur, mx = (nv.get("pcie_gen_current"), nv.get("pcie_width_current")), (
        nv.get("pcie_gen_max"), nv.get("pcie_width_max"))
    if all(cur) and all(mx) and cur != mx:
        notes.append(f"PCIe link is gen{cur[0]} x{cur[1]} now, gen{mx[0]} x{mx[1]} at best: links "
                     "slow down when idle; transfers are compared with the max link")
    reasons = nv.get("clocks_event_reasons")
    if reasons and is_throttled(reasons):
        notes.append("clocks are held down now (" + ", ".join(reasons) + "): timings may be low")

    return DeviceReport(
        index=int(index),
        name=name,
        cc=cc,
        total_memory_bytes=total,
        cuda_driver_version=(f"{drv_version // 1000}.{(drv_version % 1000) // 10}"
                             if drv_version else None),
        attributes=tuple(attributes),
        nvml=nvml_readings,
        memory_bandwidth=mem_bw,
        pcie_current=_pcie(nv.get("pcie_gen_current"), nv.get("pcie_width_current")),
        pcie_max=_pcie(nv.get("pcie_gen_max"), nv.get("pcie_width_max")),
        peaks=peak_list,
        notes=tuple(notes),
    )
