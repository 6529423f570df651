"""Stand-ins for the CUDA attribute source and pynvml, with an H100's numbers.

For tests and demos on machines without a GPU: ``query_device(0, cuda=FakeCuda(),
nvml=FakeNvml())`` gives a full DeviceReport. The numbers are those measured on an H100 80GB HBM3
(project reference notes): 132 SMs, 2619 MHz memory clock, 5120-bit bus, 50 MiB L2, PCIe gen5
x16; the 1980 MHz SM clock is the H100 SXM boost clock, an assumption of the fake.
Arguments make queries fail (``missing=``, ``unsupported=``, ``init_error=``) to exercise the
"null with a note" paths.
"""

from __future__ import annotations

H100_ATTRIBUTES = {
    "MULTIPROCESSOR_COUNT": 132, "CLOCK_RATE": 1980000, "MEMORY_CLOCK_RATE": 2619000,
    "GLOBAL_MEMORY_BUS_WIDTH": 5120, "L2_CACHE_SIZE": 50 * 1024 * 1024,
    "MAX_PERSISTING_L2_CACHE_SIZE": 32 * 1024 * 1024,
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 233472, "MAX_SHARED_MEMORY_PER_BLOCK": 49152,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448, "RESERVED_SHARED_MEMORY_PER_BLOCK": 1024,
    "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536, "MAX_REGISTERS_PER_BLOCK": 65536,
    "MAX_THREADS_PER_MULTIPROCESSOR": 2048, "MAX_THREADS_PER_BLOCK": 1024,
    "MAX_BLOCKS_PER_MULTIPROCESSOR": 32, "WARP_SIZE": 32, "TOTAL_CONSTANT_MEMORY": 65536,
    "ASYNC_ENGINE_COUNT": 3, "CONCURRENT_KERNELS": 1, "ECC_ENABLED": 1, "INTEGRATED": 0,
    "PCI_DOMAIN_ID": 0, "PCI_BUS_ID": 0x18, "PCI_DEVICE_ID": 0,
    "COMPUTE_CAPABILITY_MAJOR": 9, "COMPUTE_CAPABILITY_MINOR": 0,
}


class FakeCuda:
    def __init__(self, attributes=None, missing=()):
        self.attrs = dict(H100_ATTRIBUTES if attributes is None else attributes)
        self.missing = set(missing)

    def name(self):
        return "NVIDIA H100 80GB HBM3"

    def total_memory(self):
        return 85_031_714_816

    def attribute(self, short):
        if short in self.missing:
            raise RuntimeError(f"cuDeviceGetAttribute({short}) failed with CUDA_ERROR_INVALID_VALUE")
        return self.attrs[short]

    def driver_version(self):
        return 13000


class NotSupported(Exception):
    def __str__(self):
        return "Not Supported"


class FakeNvml:
    """Implements the pynvml names query_device uses."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0

    def __init__(self, reasons: int = 0x1, unsupported=(), init_error: Exception | None = None):
        self.reasons, self.unsupported, self.init_error = reasons, set(unsupported), init_error
        self.bus_ids: list[str] = []
        self.shutdown_called = False

    def _gate(self, name):
        if name in self.unsupported:
            raise NotSupported()

    def nvmlInit(self):
        if self.init_error:
            raise self.init_error

    def nvmlShutdown(self):
        self.shutdown_called = True

    def nvmlDeviceGetHandleByPciBusId(self, bus_id):
        self.bus_ids.append(bus_id)
        return "handle"

    def nvmlDeviceGetHandleByIndex(self, index):
        return "handle"

    def nvmlSystemGetDriverVersion(self):
        return "580.159.04"

    def nvmlDeviceGetClockInfo(self, h, kind):
        self._gate("nvmlDeviceGetClockInfo")
        return {1: 345, 2: 2619}[kind]

    def nvmlDeviceGetMaxClockInfo(self, h, kind):
        return {1: 1980, 2: 2619}[kind]

    def nvmlDeviceGetDefaultApplicationsClock(self, h, kind):
        self._gate("nvmlDeviceGetDefaultApplicationsClock")
        return {1: 1755, 2: 2619}[kind]

    def nvmlDeviceGetEccMode(self, h):
        return [1, 1]

    def nvmlDeviceGetPowerUsage(self, h):
        return 71_234  # mW

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return 700_000

    def nvmlDeviceGetTemperature(self, h, sensor):
        return 31

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return self.reasons

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h):
        return 1  # links train down at idle

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h):
        return 5

    def nvmlDeviceGetCurrPcieLinkWidth(self, h):
        return 16

    def nvmlDeviceGetMaxPcieLinkWidth(self, h):
        self._gate("nvmlDeviceGetMaxPcieLinkWidth")
        return 16
