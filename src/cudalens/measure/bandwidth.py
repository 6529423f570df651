"""Bandwidth test: host<->device (pageable and pinned) and device<->device (copy engine and kernel).

What is measured (BPG 9.1 host-device transfers, 8.2 effective bandwidth):

========================  =======================================  ===========================
test                      how                                      bytes counted per copy
========================  =======================================  ===========================
``h2d_pageable``          cuMemcpyHtoDAsync from a numpy array     N (bytes moved)
``h2d_pinned``            cuMemcpyHtoDAsync from cuMemAllocHost    N
``d2h_pageable``          cuMemcpyDtoHAsync into a numpy array     N
``d2h_pinned``            cuMemcpyDtoHAsync into cuMemAllocHost    N
``d2d_memcpy``            cuMemcpyDtoDAsync                        2N (N read + N written)
``d2d_kernel``            our copy kernel, 16 B per thread         2N (N read + N written)
========================  =======================================  ===========================

Counting read + written bytes for device copies is the BPG 8.2.2 convention (effective bandwidth
= (bytes read + bytes written) / time); it is what a DRAM ceiling must be compared with. GB/s is
10^9 bytes per second throughout. Host<->device results are compared with the theoretical PCIe
bandwidth of the link (per direction), device copies with the theoretical memory bandwidth.

Timing: CUDA events on one stream around ``copies`` back-to-back copies (more for small sizes, so
each sample lasts long enough for the ~0.5 us event resolution), after warm-up copies; the
reported time per copy is the median over samples; every sample is kept.

The GPU-free parts (size parsing, sample statistics, the measurement plan) are plain functions;
the CUDA work sits behind :class:`CudaCopier`, so the plan can be tested with a fake timer.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Protocol, Sequence

from cudalens.errors import InputError

KIB, MIB, GIB = 1024, 1024**2, 1024**3
GB = 10**9


@dataclass(frozen=True)
class TestSpec:
    key: str
    direction: str  # "h2d", "d2h", "d2d"
    memory: str  # "pageable", "pinned", "device"
    method: str  # the API call or kernel
    bytes_factor: int  # bytes counted per byte of buffer: 1 moved, or 2 = read + written
    reference: str  # "pcie" or "memory"


TESTS: tuple[TestSpec, ...] = (
    TestSpec("h2d_pageable", "h2d", "pageable", "cuMemcpyHtoDAsync", 1, "pcie"),
    TestSpec("h2d_pinned", "h2d", "pinned", "cuMemcpyHtoDAsync", 1, "pcie"),
    TestSpec("d2h_pageable", "d2h", "pageable", "cuMemcpyDtoHAsync", 1, "pcie"),
    TestSpec("d2h_pinned", "d2h", "pinned", "cuMemcpyDtoHAsync", 1, "pcie"),
    TestSpec("d2d_memcpy", "d2d", "device", "cuMemcpyDtoDAsync", 2, "memory"),
    TestSpec("d2d_kernel", "d2d", "device", "copy kernel (one int4 per thread)", 2, "memory"),
)
TEST_KEYS = tuple(t.key for t in TESTS)

COUNTING_NOTE = (
    "GB/s = 10^9 bytes/s. Host<->device: bytes moved. Device<->device: bytes read + bytes "
    "written (2 x buffer size), compared with the theoretical DRAM bandwidth."
)

COPY_KERNEL_SOURCE = r"""
// One 16-byte vector per thread, one thread per vector, no grid-stride loop: on an H100 this
// reached 0.998 of cuMemcpyDtoDAsync while every persistent grid-stride variant (1 or 4 loads in
// flight, 1 to 4 waves) stayed near 0.93 (benchmarks/measure/copy_variants.py, results/h100).
// cuMemAlloc pointers are 256-byte aligned, so the int4 accesses are aligned; the last
// nbytes % 16 bytes are copied one byte per thread by the first threads.
extern "C" __global__ void cudalens_copy(const unsigned char* __restrict__ src,
                                         unsigned char* __restrict__ dst,
                                         unsigned long long nbytes)
{
    const unsigned long long nvec = nbytes / 16;
    const unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nvec) {
        reinterpret_cast<int4*>(dst)[k] = reinterpret_cast<const int4*>(src)[k];
    }
    if (k < nbytes % 16) {
        dst[nvec * 16 + k] = src[nvec * 16 + k];
    }
}
"""


def copy_grid(nbytes: int, block: int) -> int:
    """Blocks for the copy kernel: one thread per 16-byte vector (the tail fits in block 0)."""
    return max(1, -(-(nbytes // 16) // block))


def spec(key: str) -> TestSpec:
    for t in TESTS:
        if t.key == key:
            return t
    raise InputError(f"unknown bandwidth test {key!r} (known: {', '.join(TEST_KEYS)})")


# ---------------------------------------------------------------------------- sizes

_SIZE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9,
               "kib": KIB, "mib": MIB, "gib": GIB, "k": KIB, "m": MIB, "g": GIB}


def parse_size(text: str) -> int:
    """ "4KiB" -> 4096, "1MB" -> 10^6, "1G" -> 2^30 (bare K/M/G are binary), "512" -> 512."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise InputError(f"size {text!r} not understood (examples: 4096, 64KiB, 1MB, 1GiB)")
    value = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    if value < 1 or value != int(value):
        raise InputError(f"size {text!r} must be a whole number of bytes >= 1")
    return int(value)


def parse_sizes(text: str) -> tuple[int, ...]:
    """Comma-separated sizes, sorted and de-duplicated."""
    parts = [p for p in str(text).split(",") if p.strip()]
    if not parts:
        raise InputError("no sizes given")
    return tuple(sorted({parse_size(p) for p in parts}))


def default_sizes() -> tuple[int, ...]:
    """The shmoo: 1 KiB, 4 KiB, ... 1 GiB (powers of 4)."""
    return tuple(KIB * 4**i for i in range(11))


def quick_sizes() -> tuple[int, ...]:
    return (64 * KIB, 4 * MIB, 64 * MIB)


def size_text(nbytes: int) -> str:
    """Binary-prefixed size for labels: 4096 -> "4 KiB"."""
    for unit, factor in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if nbytes >= factor and nbytes % factor == 0:
            return f"{nbytes // factor} {unit}"
    return f"{nbytes} B"


def copies_per_sample(nbytes: int, target_bytes: int = 16 * MIB, cap: int = 64) -> int:
    """Back-to-back copies per timed sample so small copies add up to ~``target_bytes``."""
    return max(1, min(cap, math.ceil(target_bytes / max(1, nbytes))))


# ---------------------------------------------------------------------------- results

@dataclass(frozen=True)
class BandwidthSample:
    """One test at one size: all per-copy times and the median-based bandwidth."""

    test: str
    nbytes: int  # buffer size, bytes
    bytes_counted: int  # per copy: nbytes, or 2 x nbytes for device<->device
    copies_per_sample: int
    times_ms: tuple[float, ...]  # per copy, one per sample
    median_ms: float
    gb_per_s: float  # bytes_counted / median time / 10^9
    reference_gb_per_s: float | None  # theoretical PCIe (per direction) or DRAM bandwidth
    percent_of_reference: float | None

    def to_dict(self) -> dict:
        return asdict(self)


def gb_per_s(bytes_counted: int, ms: float) -> float:
    if ms <= 0:
        raise InputError(f"time must be > 0 ms, got {ms}")
    return bytes_counted / (ms * 1e-3) / GB


def make_sample(test: str, nbytes: int, times_ms: Sequence[float], copies: int = 1,
                reference_gb_per_s: float | None = None) -> BandwidthSample:
    """Summarize per-copy times of one test/size into a sample (median, GB/s, % of reference)."""
    if not times_ms:
        raise InputError("no timings to summarize")
    t = spec(test)
    median = float(statistics.median(times_ms))
    counted = nbytes * t.bytes_factor
    rate = gb_per_s(counted, median)
    pct = 100.0 * rate / reference_gb_per_s if reference_gb_per_s else None
    return BandwidthSample(test, int(nbytes), counted, int(copies), tuple(float(x) for x in times_ms),
                           median, rate, reference_gb_per_s, pct)


@dataclass(frozen=True)
class BandwidthResult:
    """A whole run: the device, the references used and every sample."""

    device_index: int
    device_name: str | None
    cc: str | None
    memory_theoretical_gb_per_s: float | None
    pcie_theoretical_gb_per_s: float | None
    pcie_link: str | None  # e.g. "PCIe gen5 x16 (max link)"
    samples: tuple[BandwidthSample, ...]
    repeats: int
    warmup: int
    kernel: dict | None  # grid, block, compiler of the copy kernel, when it ran
    counting: str = COUNTING_NOTE

    def for_test(self, test: str) -> tuple[BandwidthSample, ...]:
        return tuple(s for s in self.samples if s.test == test)

    def best(self, test: str) -> BandwidthSample | None:
        found = self.for_test(test)
        return max(found, key=lambda s: s.gb_per_s) if found else None

    def to_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------- the plan

class Copier(Protocol):
    """What the plan needs from the GPU side: time ``copies`` copies of ``nbytes``, in ms total."""

    def time_copies(self, test: str, nbytes: int, copies: int) -> float: ...


ProgressFn = Callable[[int, int, str], None]


def measure_plan(copier: Copier, tests: Iterable[str], sizes: Iterable[int], *,
                 repeats: int = 10, warmup: int = 2, budget_ms: float = 600.0,
                 references: dict[str, float | None] | None = None,
                 progress: ProgressFn | None = None) -> tuple[BandwidthSample, ...]:
    """Run every test at every size with warm-up and (budget-limited) repeats.

    Each sample times ``copies_per_sample(nbytes)`` copies; the number of samples is ``repeats``,
    reduced (never below 3) when the warm-up shows they would take longer than ``budget_ms``.
    """
    if repeats < 1 or warmup < 0:
        raise InputError(f"repeats must be >= 1 and warmup >= 0 (got {repeats}, {warmup})")
    tests, sizes = [spec(t).key for t in tests], list(sizes)
    references = references or {}
    total, done, out = len(tests) * len(sizes), 0, []
    for test in tests:
        for nbytes in sizes:
            if progress:
                progress(done, total, f"{test} {size_text(nbytes)}")
            copies = copies_per_sample(nbytes)
            estimate = None
            for _ in range(max(1, warmup)):  # at least one, to estimate the cost
                estimate = copier.time_copies(test, nbytes, copies)
            n = repeats
            if estimate and estimate * repeats > budget_ms:
                n = max(min(3, repeats), int(budget_ms // estimate))
            times = [copier.time_copies(test, nbytes, copies) / copies for _ in range(n)]
            out.append(make_sample(test, nbytes, times, copies, references.get(spec(test).reference)))
            done += 1
    if progress:
        progress(done, total, "done")
    return tuple(out)


# ---------------------------------------------------------------------------- the GPU side

class CudaCopier:
    """Buffers, stream, events and the copy kernel for one device; use in a ``with`` block."""

    BLOCK = 512

    def __init__(self, device_index: int, max_bytes: int, tests: Sequence[str]) -> None:
        self.device_index, self.max_bytes, self.tests = device_index, int(max_bytes), tuple(tests)
        self.kernel_info: dict | None = None

    def __enter__(self) -> "CudaCopier":
        import contextlib  # noqa: PLC0415

        import numpy as np  # noqa: PLC0415
        from cuda.bindings import driver  # noqa: PLC0415

        from cudalens.hardware import cuda_driver as cu  # noqa: PLC0415

        self._cu, self._drv, self._np = cu, driver, np
        self._stack = contextlib.ExitStack()
        try:
            self.ctx = self._stack.enter_context(cu.device_context(self.device_index))
            free, _total = cu.check(driver.cuMemGetInfo(), "cuMemGetInfo")
            need = 2 * self.max_bytes
            if need > 0.9 * free:
                raise InputError(f"largest size needs {need / GB:.2f} GB of device memory, "
                                 f"{free / GB:.2f} GB free; pass smaller --sizes")
            self.stream = self._stack.enter_context(cu.Stream())
            self.start = self._stack.enter_context(cu.Event())
            self.end = self._stack.enter_context(cu.Event())
            self.src = self._stack.enter_context(cu.DeviceBuffer(self.max_bytes))
            self.dst = self._stack.enter_context(cu.DeviceBuffer(self.max_bytes))
            cu.check(driver.cuMemsetD8Async(self.src.handle, 0xA5, self.max_bytes,
                                            self.stream.handle), "cuMemsetD8Async")
            if any(spec(t).memory == "pinned" for t in self.tests) or "d2d_kernel" in self.tests:
                self.pinned = self._stack.enter_context(cu.PinnedHostBuffer(self.max_bytes))
            if any(spec(t).memory == "pageable" for t in self.tests):
                self.pageable = np.ones(self.max_bytes, dtype=np.uint8)  # touched: pages exist
            if "d2d_kernel" in self.tests:
                self._setup_kernel()
            self.stream.synchronize()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if getattr(self, "kernel", None) is not None:
            self.kernel.unload()
        self._stack.close()

    def _setup_kernel(self) -> None:
        from cudalens.compiled.runtime_compile import compile_kernel  # noqa: PLC0415

        self.kernel = compile_kernel(COPY_KERNEL_SOURCE, "cudalens_copy", self.ctx.cc)
        self.kernel_info = {"name": self.kernel.name, "compiler": self.kernel.compiler,
                            "block": self.BLOCK, "grid": "ceil(bytes / 16 / block), at least 1",
                            "source": "cudalens.measure.bandwidth.COPY_KERNEL_SOURCE"}

    def _one(self, test: str, nbytes: int) -> None:
        cu, drv, s = self._cu, self._drv, self.stream.handle
        if test == "h2d_pageable":
            cu.check(drv.cuMemcpyHtoDAsync(self.dst.handle, self.pageable.ctypes.data, nbytes, s),
                     "cuMemcpyHtoDAsync")
        elif test == "h2d_pinned":
            cu.check(drv.cuMemcpyHtoDAsync(self.dst.handle, self.pinned.ptr, nbytes, s),
                     "cuMemcpyHtoDAsync")
        elif test == "d2h_pageable":
            cu.check(drv.cuMemcpyDtoHAsync(self.pageable.ctypes.data, self.src.handle, nbytes, s),
                     "cuMemcpyDtoHAsync")
        elif test == "d2h_pinned":
            cu.check(drv.cuMemcpyDtoHAsync(self.pinned.ptr, self.src.handle, nbytes, s),
                     "cuMemcpyDtoHAsync")
        elif test == "d2d_memcpy":
            cu.check(drv.cuMemcpyDtoDAsync(self.dst.handle, self.src.handle, nbytes, s),
                     "cuMemcpyDtoDAsync")
        elif test == "d2d_kernel":
            cu.launch(self.kernel, copy_grid(nbytes, self.BLOCK), self.BLOCK,
                      [(self.src.ptr, "u8"), (self.dst.ptr, "u8"), (nbytes, "u8")], self.stream)
        else:
            raise InputError(f"unknown bandwidth test {test!r}")

    def time_copies(self, test: str, nbytes: int, copies: int) -> float:
        """Total milliseconds of ``copies`` back-to-back copies, timed with events on our stream."""
        if nbytes > self.max_bytes:
            raise InputError(f"{nbytes} B is larger than the buffers ({self.max_bytes} B)")
        self.start.record(self.stream)
        for _ in range(copies):
            self._one(test, nbytes)
        self.end.record(self.stream)
        return self._cu.elapsed_ms(self.start, self.end)

    def verify_kernel_copy(self, nbytes: int) -> bool:
        """After a kernel copy: the first ``nbytes`` of dst equal the 0xA5 fill of src."""
        cu, drv, np = self._cu, self._drv, self._np
        cu.check(drv.cuMemsetD8Async(self.dst.handle, 0, nbytes, self.stream.handle), "cuMemsetD8Async")
        self._one("d2d_kernel", nbytes)
        cu.check(drv.cuMemcpyDtoHAsync(self.pinned.ptr, self.dst.handle, nbytes, self.stream.handle),
                 "cuMemcpyDtoHAsync")
        self.stream.synchronize()
        import ctypes  # noqa: PLC0415

        view = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(self.pinned.ptr))
        return bool((view == 0xA5).all())


def _references(report) -> tuple[float | None, float | None, str | None]:
    if report is None:
        return None, None, None
    mem = report.memory_bandwidth.gb_per_s if report.memory_bandwidth else None
    link, which = report.pcie_max, "max link"
    if link is None:
        link, which = report.pcie_current, "current link"
    if link is None:
        return mem, None, None
    return mem, link.gb_per_s, f"PCIe gen{link.generation} x{link.width} ({which})"


def run_bandwidth(device_index: int = 0, sizes: Sequence[int] | None = None,
                  tests: Sequence[str] = TEST_KEYS, *, repeats: int = 10, warmup: int = 2,
                  budget_ms: float = 600.0, report=None,
                  progress: ProgressFn | None = None) -> BandwidthResult:
    """Measure the bandwidth tests on device ``device_index`` and compare with theory.

    ``report`` is a :class:`cudalens.hardware.live.DeviceReport` (queried when omitted) giving the
    theoretical memory and PCIe bandwidth. NoDeviceError without a GPU; InputError for bad sizes.
    """
    from cudalens.hardware.live import query_device  # noqa: PLC0415

    sizes = tuple(sorted(set(sizes or default_sizes())))
    tests = tuple(spec(t).key for t in tests)
    if not tests:
        raise InputError("no bandwidth tests selected")
    if sizes[0] < 1:
        raise InputError("sizes must be >= 1 byte")
    if report is None:
        report = query_device(device_index)
    mem, pcie, link = _references(report)
    refs = {"memory": mem, "pcie": pcie}
    with CudaCopier(device_index, max(sizes), tests) as copier:
        samples = measure_plan(copier, tests, sizes, repeats=repeats, warmup=warmup,
                               budget_ms=budget_ms, references=refs, progress=progress)
        kernel = None
        if "d2d_kernel" in tests:
            ok = copier.verify_kernel_copy(max(sizes))
            kernel = dict(copier.kernel_info or {}, verified=ok)
            if not ok:
                from cudalens.errors import CudalensError  # noqa: PLC0415

                raise CudalensError("the copy kernel produced wrong data: its timings are invalid")
    return BandwidthResult(
        device_index=int(device_index), device_name=report.name, cc=report.cc,
        memory_theoretical_gb_per_s=mem, pcie_theoretical_gb_per_s=pcie, pcie_link=link,
        samples=samples, repeats=repeats, warmup=warmup, kernel=kernel,
    )


def copy_kernel_bandwidth(nbytes: int = 256 * MIB, device_index: int = 0, *, repeats: int = 20,
                          report=None) -> BandwidthSample:
    """Measured DRAM ceiling: our copy kernel on ``nbytes`` (read + written bytes counted).

    Use a size well above the L2 (the default 256 MiB is 5x an H100's 50 MiB L2) so the copy
    streams from DRAM.
    """
    result = run_bandwidth(device_index, (int(nbytes),), ("d2d_kernel",), repeats=repeats,
                           report=report)
    return result.samples[0]
