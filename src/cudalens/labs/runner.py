"""The labs' access to a GPU: one small interface, a real implementation, and a fake in fake.py.

Labs never touch CUDA directly. They ask a *runner* to compile a kernel file, allocate buffers,
time launches and time a handful of host-side operations (copies, allocation loops, streams).
Kernel timing goes through the shared harness (:func:`cudalens.measure.harness.bench`): cold
samples (persisting-L2 reset and an L2 flush before every launch), the event floor subtracted,
throttled samples and samples with work left on other streams excluded, adaptive sample count.
The L2-window lab times hot without the persisting reset (the window is what it measures).

The real runner uses ``cuda.core`` (NVRTC compilation for the device's own architecture,
launches) and ``cuda.bindings.runtime`` for host memory, copies, stream attributes and allocation.
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Protocol, Sequence

import numpy as np

from cudalens.errors import NoDeviceError
from cudalens.hardware.device import DeviceFacts
from cudalens.hardware.theory import memory_bandwidth

KERNEL_PACKAGE = "cudalens.labs"


def kernel_path(file: str):
    """Path of a lab kernel file shipped with the package (labs/kernels/<file>)."""
    return resources.files(KERNEL_PACKAGE).joinpath("kernels").joinpath(file)


def kernel_source(file: str) -> str:
    return kernel_path(file).read_text(encoding="utf-8")


_KERNEL_RE = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")


def kernel_names(source: str) -> tuple[str, ...]:
    """Names of the __global__ functions defined in a lab kernel file."""
    return tuple(_KERNEL_RE.findall(source))


def device_dict(info: DeviceFacts) -> dict[str, Any]:
    """The device as the lab results have always written it (their JSON keys)."""
    return {"name": info.name, "cc": info.cc, "sm_count": info.sm_count,
            "l2_bytes": info.l2_bytes, "max_persisting_l2_bytes": info.max_persisting_l2_bytes,
            "max_threads_per_sm": info.max_threads_per_sm,
            "max_smem_per_block_optin_bytes": info.max_smem_per_block_optin,
            "integrated": info.integrated, "can_map_host_memory": info.can_map_host,
            "async_copy_engines": info.async_engines,
            "peak_bandwidth_GBps": info.theoretical_bandwidth_gbs}


@dataclass(frozen=True)
class Timing:
    """Median time of one operation in milliseconds, with every sample kept."""

    ms: float
    samples: tuple[float, ...] = ()
    batch: int = 1
    certificate: dict | None = field(default=None, compare=False)  # the harness's, for kernel timings

    @property
    def spread(self) -> float:
        """(max - min) / median of the samples: a rough noise figure."""
        if len(self.samples) < 2 or self.ms <= 0:
            return 0.0
        return (max(self.samples) - min(self.samples)) / self.ms


@dataclass(frozen=True)
class KernelInfo:
    """What the loaded kernel reports about itself (from the driver)."""

    registers: int
    local_bytes: int
    static_shared_bytes: int


class Runner(Protocol):
    """Everything a lab may ask of a GPU. Pointers are device addresses as numpy.uint64."""

    info: DeviceFacts
    samples: int

    def kernel(self, file: str, name: str, defines: Sequence[str] = (), fast_math: bool = False,
               max_registers: int | None = None) -> Any: ...
    def kernel_info(self, kernel: Any) -> KernelInfo: ...
    def blocks_per_sm(self, kernel: Any, block: int, dynamic_smem: int) -> int: ...
    def set_max_dynamic_smem(self, kernel: Any, nbytes: int) -> None: ...
    def alloc(self, nbytes: int) -> np.uint64: ...
    def time_kernel(self, kernel: Any, grid: Any, block: Any, args: Sequence[Any],
                    shared_mem: int = 0) -> Timing: ...
    def time_copies(self, direction: str, nbytes: int, pinned: bool, chunks: int = 1) -> Timing: ...
    def time_staged(self, kernel: Any, nbytes: int, n_streams: int, iters: int,
                    block: int) -> Timing: ...
    def time_zero_copy(self, kernel: Any, nbytes: int, mapped: bool, block: int) -> Timing: ...
    def time_alloc_loop(self, mode: str, nbytes: int, iterations: int) -> Timing: ...
    def time_streams(self, kernel: Any, n_kernels: int, n_streams: int, grid: int, block: int,
                     iters: int) -> Timing: ...
    def time_window(self, kernel: Any, grid: int, block: int, args: Sequence[Any],
                    window: tuple[np.uint64, int, float] | None, setaside: int) -> Timing: ...
    def release(self) -> None: ...
    def close(self) -> None: ...


def find_nvcc() -> str | None:
    """nvcc as cudalens.compiled.toolchain finds it (the one finder: wheels first)."""
    from cudalens.compiled.toolchain import find_nvcc as _find

    return _find()


def nvcc_flags(cc: tuple[int, int], defines: Sequence[str] = (), fast_math: bool = False,
               max_registers: int | None = None) -> list[str]:
    flags = [f"-arch=sm_{cc[0]}{cc[1]}", "-std=c++17", "-cubin"]
    flags += [f"-D{d}" for d in defines]
    if fast_math:
        flags.append("-use_fast_math")
    if max_registers:
        flags.append(f"-maxrregcount={max_registers}")
    return flags


def mangled_names(cubin: bytes, names: Sequence[str]) -> dict[str, str]:
    """Map each kernel name to its C++-mangled symbol found in a cubin's symbol table."""
    out = {}
    for name in names:
        m = re.search(rb"_Z%d%s[A-Za-z0-9_]*" % (len(name), name.encode()), cubin)
        if m:
            out[name] = m.group(0).decode()
    return out


def _compile_with_nvcc(file: str, cc: tuple[int, int], defines: Sequence[str], fast_math: bool,
                       max_registers: int | None) -> Any:
    import subprocess
    import tempfile

    from cuda.core import ObjectCode
    nvcc = find_nvcc()
    if nvcc is None:
        raise RuntimeError("nvcc not found")
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/k.cubin"
        cmd = [nvcc, *nvcc_flags(cc, defines, fast_math, max_registers), "-o", out, str(kernel_path(file))]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip()[-500:])
        data = open(out, "rb").read()
    names = kernel_names(kernel_source(file))
    mapping = {k: v.encode() for k, v in mangled_names(data, names).items()}  # cuda.core wants bytes
    return ObjectCode.from_cubin(data, name=file, symbol_mapping=mapping)


def _ck(result: Any) -> Any:
    """Unwrap a cuda.bindings (err, value...) tuple, raising on an error code."""
    if isinstance(result, tuple):
        err, rest = result[0], result[1:]
    else:
        err, rest = result, ()
    if int(err) != 0:
        raise RuntimeError(f"CUDA call failed: {err}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


@dataclass
class CudaRunner:
    """The real runner (needs an NVIDIA GPU, cuda.core >= 0.3 and cuda.bindings)."""

    samples: int = 20
    min_sample_ms: float = 0.2
    device_id: int = 0
    max_time_s: float = 1.0
    info: DeviceFacts = field(init=False)
    certificates: list = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        try:
            from cuda.bindings import runtime as rt
            from cuda.core import Device
            err, count = rt.cudaGetDeviceCount()
            if int(err) != 0 or count == 0:
                raise RuntimeError("no device")
            self._dev = Device(self.device_id)
            self._dev.set_current()
        except Exception as exc:  # noqa: BLE001 - any failure here means "no usable GPU"
            raise NoDeviceError(f"labs need an NVIDIA GPU with cuda-python ({type(exc).__name__}: {exc})") from exc
        self._rt = rt
        p = self._dev.properties
        cc = self._dev.compute_capability
        try:
            mem_khz, bus = int(p.memory_clock_rate or 0), int(p.global_memory_bus_width or 0)
        except Exception:  # noqa: BLE001 - a property this cuda.core/driver pair does not report: unknown
            mem_khz, bus = 0, 0
        peak = memory_bandwidth(mem_khz * 1e3, bus).gb_per_s if mem_khz > 0 and bus > 0 else None
        self.info = DeviceFacts(
            name=self._dev.name, index=self.device_id, cc=f"{cc.major}.{cc.minor}", sm_count=p.multiprocessor_count,
            l2_bytes=p.l2_cache_size, max_persisting_l2_bytes=getattr(p, "max_persisting_l2_cache_size", 0),
            max_threads_per_sm=p.max_threads_per_multiprocessor,
            max_smem_per_block_optin=p.max_shared_memory_per_block_optin,
            integrated=bool(p.integrated), can_map_host=bool(p.can_map_host_memory),
            async_engines=p.async_engine_count, theoretical_bandwidth_gbs=peak,
            mem_clock_mhz=mem_khz / 1e3, bus_width_bits=bus,
        )
        self._stream = self._dev.create_stream()
        self._programs: dict[tuple, Any] = {}
        self._buffers: list[Any] = []
        self._host: list[Any] = []

    # ---- kernels --------------------------------------------------------------------------
    def kernel(self, file: str, name: str, defines: Sequence[str] = (), fast_math: bool = False,
               max_registers: int | None = None) -> Any:
        from cuda.core import Program, ProgramOptions
        key = (file, tuple(defines), fast_math, max_registers)
        obj = self._programs.get(key)
        if obj is None:
            opts = ProgramOptions(
                name=file, arch=self.info.arch, std="c++17",
                define_macro=list(defines) or None,
                use_fast_math=fast_math or None, max_register_count=max_registers,
            )
            src = kernel_source(file)
            try:
                # Kernels have C++ linkage (the source front end reads them that way); NVRTC
                # lowers their names and cuda.core maps them back through name_expressions.
                obj = Program(src, "c++", options=opts).compile("cubin", name_expressions=kernel_names(src))
            except Exception as nvrtc_error:  # noqa: BLE001 - e.g. no libnvrtc: try nvcc
                try:
                    obj = _compile_with_nvcc(file, self.info.cc_tuple, defines, fast_math, max_registers)
                except Exception as nvcc_error:  # noqa: BLE001
                    raise RuntimeError(f"cannot compile {file}: NVRTC: {nvrtc_error}; nvcc: {nvcc_error}") from nvcc_error
            self._programs[key] = obj
        return obj.get_kernel(name)

    def kernel_info(self, kernel: Any) -> KernelInfo:
        a = kernel.attributes
        return KernelInfo(a.num_regs, a.local_size_bytes, a.shared_size_bytes)

    def blocks_per_sm(self, kernel: Any, block: int, dynamic_smem: int) -> int:
        return int(kernel.occupancy.max_active_blocks_per_multiprocessor(block, dynamic_smem))

    def set_max_dynamic_smem(self, kernel: Any, nbytes: int) -> None:
        """cudaFuncSetAttribute(MaxDynamicSharedMemorySize) for a cuda.core kernel (a CUkernel of
        a library: the attribute is set per device with cuKernelSetAttribute)."""
        from cuda.bindings import driver as drv  # noqa: PLC0415

        attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        handle = kernel.handle
        if isinstance(handle, drv.CUfunction):
            _ck(drv.cuFuncSetAttribute(handle, attr, int(nbytes)))
        else:
            _ck(drv.cuKernelSetAttribute(attr, int(nbytes), handle, drv.CUdevice(self._dev.device_id)))

    # ---- memory ---------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> np.uint64:
        ptr = int(_ck(self._rt.cudaMalloc(int(nbytes))))
        self._buffers.append(ptr)
        _ck(self._rt.cudaMemset(ptr, 0, int(nbytes)))
        return np.uint64(ptr)

    def _pinned(self, nbytes: int, mapped: bool = False) -> int:
        rt = self._rt
        flags = rt.cudaHostAllocMapped if mapped else rt.cudaHostAllocDefault
        ptr = _ck(rt.cudaHostAlloc(int(nbytes), flags))
        self._host.append(ptr)
        return int(ptr)

    def release(self) -> None:
        """Free every buffer the last lab allocated (and the programs it compiled)."""
        self._dev.sync()
        for b in self._buffers:
            self._rt.cudaFree(b)
        self._buffers.clear()
        for p in self._host:
            self._rt.cudaFreeHost(p)
        self._host.clear()
        self._programs.clear()
        self._dev.sync()

    def close(self) -> None:
        self.release()

    # ---- timing ---------------------------------------------------------------------------
    def time_kernel(self, kernel: Any, grid: Any, block: Any, args: Sequence[Any],
                    shared_mem: int = 0, *, mode: str = "cold", reset_persisting: bool = True) -> Timing:
        """Median time of one launch in ms, measured by the harness (see the module docstring)."""
        from cuda.core import LaunchConfig, launch

        from cudalens.measure.harness import bench
        cfg = LaunchConfig(grid=grid, block=block, shmem_size=int(shared_mem))

        def issue() -> None:
            launch(self._stream, cfg, kernel, *args)

        issue()
        self._stream.sync()
        r = bench(issue, stream=self._stream, mode=mode, name=getattr(kernel, "name", "lab kernel"),
                  reset_persisting=reset_persisting, device=self.device_id, noise_target=0.01,
                  min_samples=max(2, self.samples // 2), min_time_s=0.05, max_time_s=self.max_time_s, warmup=2)
        samples = tuple(x * 1e3 for x in r.kept_seconds)
        self.certificates.append(r.certificate or {})
        return Timing(r.summary.median * 1e3, samples, int(r.config.get("batch", 1)), r.certificate)

    def _host_timed(self, issue, repeats: int | None = None) -> Timing:
        """Median wall time (ms) of issue() followed by a device synchronize."""
        issue()
        self._dev.sync()
        samples = []
        for _ in range(repeats or self.samples):
            t0 = time.perf_counter()
            issue()
            self._dev.sync()
            samples.append((time.perf_counter() - t0) * 1e3)
        return Timing(statistics.median(samples), tuple(samples), 1)

    def time_copies(self, direction: str, nbytes: int, pinned: bool, chunks: int = 1) -> Timing:
        rt = self._rt
        dev = int(self.alloc(nbytes))
        if pinned:
            host = self._pinned(nbytes)
        else:
            arr = np.ones(nbytes, dtype=np.uint8)  # touched, so pages are resident
            self._host_arrays = getattr(self, "_host_arrays", []) + [arr]
            host = arr.ctypes.data
        if direction == "h2d":
            kind, dst, src = rt.cudaMemcpyKind.cudaMemcpyHostToDevice, dev, host
        else:
            kind, dst, src = rt.cudaMemcpyKind.cudaMemcpyDeviceToHost, host, dev
        step = nbytes // chunks

        def issue() -> None:
            for c in range(chunks):
                _ck(rt.cudaMemcpy(dst + c * step, src + c * step, step, kind))

        repeats = self.samples if nbytes * 1 <= (64 << 20) else max(5, self.samples // 2)
        t = self._host_timed(issue, repeats)
        self._host_arrays = []
        return t

    def time_staged(self, kernel: Any, nbytes: int, n_streams: int, iters: int, block: int) -> Timing:
        """H2D copy + kernel over nbytes of floats. n_streams = 0: everything in order on one
        stream (sequential); n >= 1: split into n chunks, chunk i copied and processed on stream i."""
        from cuda.core import LaunchConfig, launch
        rt = self._rt
        dev = int(self.alloc(nbytes))
        host = self._pinned(nbytes)
        n_words = nbytes // 4
        streams = [self._dev.create_stream() for _ in range(max(1, n_streams))]
        h2d = rt.cudaMemcpyKind.cudaMemcpyHostToDevice

        def run_chunk(s, first: int, count: int) -> None:
            _ck(rt.cudaMemcpyAsync(dev + first * 4, host + first * 4, count * 4, h2d, int(s.handle)))
            cfg = LaunchConfig(grid=(count + block - 1) // block, block=block)
            launch(s, cfg, kernel, np.uint64(dev), np.int64(first), np.int64(count), np.int32(iters))

        def issue() -> None:
            if n_streams <= 0:
                run_chunk(streams[0], 0, n_words)
                return
            per = n_words // n_streams
            for i, s in enumerate(streams):
                count = per if i < n_streams - 1 else n_words - per * (n_streams - 1)
                run_chunk(s, i * per, count)

        t = self._host_timed(issue, max(5, self.samples // 2))
        for s in streams:
            s.close()
        return t

    def time_zero_copy(self, kernel: Any, nbytes: int, mapped: bool, block: int) -> Timing:
        from cuda.core import LaunchConfig, launch
        rt = self._rt
        n = nbytes // 4
        out = self.alloc(nbytes)
        host = self._pinned(nbytes, mapped=True)
        cfg = LaunchConfig(grid=(n + block - 1) // block, block=block)
        if mapped:
            dptr = int(_ck(rt.cudaHostGetDevicePointer(host, 0)))

            def issue() -> None:
                launch(self._stream, cfg, kernel, out, np.uint64(dptr), np.int64(n))
        else:
            dev = int(self.alloc(nbytes))

            def issue() -> None:
                _ck(rt.cudaMemcpyAsync(dev, host, nbytes, rt.cudaMemcpyKind.cudaMemcpyHostToDevice,
                                       int(self._stream.handle)))
                launch(self._stream, cfg, kernel, out, np.uint64(dev), np.int64(n))
        return self._host_timed(issue, max(5, self.samples // 2))

    def time_alloc_loop(self, mode: str, nbytes: int, iterations: int) -> Timing:
        """Per-iteration time (ms) of: allocate, memset, free ('malloc'); memset into one
        buffer allocated before the loop ('once'); cudaMallocAsync/cudaFreeAsync ('pool')."""
        rt = self._rt
        s = int(self._stream.handle)
        once = int(self.alloc(nbytes)) if mode == "once" else 0

        def issue() -> None:
            for _ in range(iterations):
                if mode == "malloc":
                    p = _ck(rt.cudaMalloc(nbytes))
                    _ck(rt.cudaMemsetAsync(p, 1, nbytes, s))
                    _ck(rt.cudaFree(p))
                elif mode == "pool":
                    p = _ck(rt.cudaMallocAsync(nbytes, s))
                    _ck(rt.cudaMemsetAsync(p, 1, nbytes, s))
                    _ck(rt.cudaFreeAsync(p, s))
                else:
                    _ck(rt.cudaMemsetAsync(once, 1, nbytes, s))

        t = self._host_timed(issue, max(5, self.samples // 2))
        return Timing(t.ms / iterations, tuple(x / iterations for x in t.samples), iterations)

    def time_streams(self, kernel: Any, n_kernels: int, n_streams: int, grid: int, block: int,
                     iters: int) -> Timing:
        from cuda.core import LaunchConfig, launch
        streams = [self._dev.create_stream() for _ in range(n_streams)]
        outs = [self.alloc(grid * block * 4) for _ in range(n_kernels)]
        cfg = LaunchConfig(grid=grid, block=block)

        def issue() -> None:
            for k in range(n_kernels):
                launch(streams[k % n_streams], cfg, kernel, outs[k], np.int32(iters))

        t = self._host_timed(issue)
        for s in streams:
            s.close()
        return t

    def time_window(self, kernel: Any, grid: int, block: int, args: Sequence[Any],
                    window: tuple[np.uint64, int, float] | None, setaside: int) -> Timing:
        """Kernel time with an L2 access-policy window on the stream (None: no window)."""
        rt = self._rt
        s = int(self._stream.handle)
        _ck(rt.cudaDeviceSetLimit(rt.cudaLimit.cudaLimitPersistingL2CacheSize, int(setaside)))
        attr = rt.cudaStreamAttrValue()
        w = attr.accessPolicyWindow
        if window is not None:
            base, nbytes, hit = window
            w.base_ptr = int(base)
            w.num_bytes = int(nbytes)
            w.hitRatio = float(hit)
            w.hitProp = rt.cudaAccessProperty.cudaAccessPropertyPersisting
            w.missProp = rt.cudaAccessProperty.cudaAccessPropertyStreaming
        else:
            w.base_ptr = 0
            w.num_bytes = 0
            w.hitRatio = 0.0
            w.hitProp = rt.cudaAccessProperty.cudaAccessPropertyNormal
            w.missProp = rt.cudaAccessProperty.cudaAccessPropertyNormal
        # The enum member's name differs between cuda-bindings releases (cudaStreamAttribute... in
        # older ones, cudaLaunchAttribute... in 13.x, where the stream enum aliases the launch one).
        attr_id = getattr(rt.cudaStreamAttrID, "cudaLaunchAttributeAccessPolicyWindow", None)
        if attr_id is None:
            attr_id = rt.cudaStreamAttrID.cudaStreamAttributeAccessPolicyWindow
        _ck(rt.cudaStreamSetAttribute(s, attr_id, attr))
        try:
            return self.time_kernel(kernel, grid, block, args, mode="hot", reset_persisting=False)
        finally:
            w.num_bytes = 0
            w.hitRatio = 0.0
            _ck(rt.cudaStreamSetAttribute(s, attr_id, attr))
            _ck(rt.cudaCtxResetPersistingL2Cache())
            _ck(rt.cudaDeviceSetLimit(rt.cudaLimit.cudaLimitPersistingL2CacheSize, 0))


def open_runner(quick: bool = False) -> CudaRunner:
    """The real runner, or NoDeviceError with a one-line reason."""
    return CudaRunner(samples=7 if quick else 20, max_time_s=0.3 if quick else 1.0)
