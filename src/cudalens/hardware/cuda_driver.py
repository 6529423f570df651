"""Small helpers over cuda.bindings (the CUDA driver API) shared by every module that runs on a GPU.

What is here, and why:

- ``check(result, call)``: every cuda.bindings function returns a tuple ``(status, *values)``;
  ``check`` raises :class:`CudaCallError` unless the status is success and returns the values.
  Never ignore a status: a failed launch otherwise shows up as a nonsense timing later.
- ``init_driver()`` / ``device_count()`` / ``cu_device(index)``: start the driver, turning "no
  driver library", "no device" and "bad index" into :class:`~cudalens.errors.NoDeviceError` or
  :class:`~cudalens.errors.InputError` (one line at the CLI, never a traceback).
- ``device_context(index)``: make the device's primary context current for a ``with`` block (the
  same context the runtime API and CuPy/PyTorch use, so pointers can be shared with them).
- ``Stream``, ``Event``, ``DeviceBuffer``, ``PinnedHostBuffer``: owners of one resource each,
  freed when the ``with`` block ends. ``elapsed_ms(start, end)`` reads an event pair.
- ``launch(...)``: launch a loaded kernel with plain Python ints. Compiling and loading one
  (NVRTC if its library loads, else ``nvcc -cubin``) is ``cudalens.compiled.runtime_compile``.

Everything imports cuda.bindings lazily, so importing this module never needs a GPU.

One GPU stack (#15): where cuda.core serves, the package uses it: NVRTC compilation by C++ name
(``measure.kernels``: ``cuda.core.Program`` with name expressions) and ``measure.kernels.load_kernel``
(``ObjectCode``). The timing path stays on cuda.bindings, for these reasons:

- the engine times work on *foreign* streams (raw handles from PyTorch, CuPy, cuda.core or a user
  int) and must read and clear their L2 access-policy window (``cuStreamGet/SetAttribute``), reset
  persisting L2 lines (``cuCtxResetPersistingL2Cache``) and capture them into graphs
  (``cuStreamBeginCapture``): cuda.core 1.2 has no API for the first two;
- the blocking kernel spins on page-locked host flags the host writes while it runs, and the
  side-work check times ``cuCtxSynchronize`` on the primary context the user's framework shares;
- events, streams, buffers and ``launch`` here are thin and measured (event floor, launch cost in
  benchmarks/results/h100/bench); moving them to cuda.core's objects is possible (``Device``,
  ``Stream.from_handle``, ``Event`` with timing, ``launch``) but changes the timed path, so it waits
  for a device run that re-measures the event floor and the short-kernel ratios against ncu.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from cudalens.errors import CudalensError, InputError, NoDeviceError


class CudaCallError(CudalensError):
    """A CUDA API call returned an error status."""

    def __init__(self, call: str, code: int, name: str, message: str = ""):
        self.call, self.code, self.name = call, code, name
        detail = f": {message}" if message and message != name else ""
        super().__init__(f"{call} failed with {name} ({code}){detail}")


def _driver():
    from cuda.bindings import driver  # noqa: PLC0415 - lazy: importing must not need a GPU

    return driver


def _status_name(status: Any) -> tuple[int, str, str]:
    """(code, enum name, description) of a CUresult / cudaError_t / nvrtcResult."""
    code = int(status)
    name = getattr(status, "name", str(status))
    message = ""
    if type(status).__name__ == "CUresult":
        try:
            err, text = _driver().cuGetErrorString(status)
            if int(err) == 0 and text:
                message = text.decode() if isinstance(text, bytes) else str(text)
        except Exception:  # noqa: BLE001 - the description is a nicety only
            pass
    return code, name, message


def check(result: Any, call: str = "CUDA call") -> Any:
    """Raise CudaCallError unless ``result[0]`` is success; return the remaining values.

    Returns None when the call returns only a status, the single value when it returns one,
    otherwise the tuple of values.
    """
    if isinstance(result, tuple):
        status, values = result[0], result[1:]
    else:
        status, values = result, ()
    if int(status) != 0:
        raise CudaCallError(call, *_status_name(status))
    if not values:
        return None
    return values[0] if len(values) == 1 else values


# ---------------------------------------------------------------------------- driver and devices

def init_driver() -> None:
    """cuInit(0); NoDeviceError when the driver library is missing or there is no usable GPU."""
    try:
        drv = _driver()
        status = drv.cuInit(0)
        if isinstance(status, tuple):
            status = status[0]
    except ImportError as exc:
        raise NoDeviceError(f"cuda.bindings is not installed ({exc})") from None
    except Exception:  # noqa: BLE001 - e.g. DynamicLibNotFoundError for libcuda.so
        raise NoDeviceError(
            "no NVIDIA driver found (the driver library libcuda could not be loaded); this command needs a GPU"
        ) from None
    if int(status) != 0:
        code, name, _ = _status_name(status)
        raise NoDeviceError(f"no usable NVIDIA GPU: cuInit returned {name} ({code})")


def device_count() -> int:
    """Number of CUDA devices (after init_driver)."""
    init_driver()
    return int(check(_driver().cuDeviceGetCount(), "cuDeviceGetCount"))


def cu_device(index: int) -> Any:
    """The CUdevice handle of device ``index``; InputError if out of range, NoDeviceError if none."""
    count = device_count()
    if count == 0:
        raise NoDeviceError("no NVIDIA GPU present")
    if not 0 <= int(index) < count:
        raise InputError(f"device {index} does not exist (this machine has {count}: 0..{count - 1})")
    return check(_driver().cuDeviceGet(int(index)), "cuDeviceGet")


def driver_version() -> int:
    """CUDA driver API version as an int, e.g. 13000 for 13.0."""
    return int(check(_driver().cuDriverGetVersion(), "cuDriverGetVersion"))


def version_text(version: int) -> str:
    """13000 -> "13.0"."""
    return f"{version // 1000}.{(version % 1000) // 10}"


def device_attribute(device: Any, name: str) -> int:
    """cuDeviceGetAttribute with the attribute given by its short name, e.g. "CLOCK_RATE"."""
    drv = _driver()
    attr = getattr(drv.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
    return int(check(drv.cuDeviceGetAttribute(attr, device), f"cuDeviceGetAttribute({name})"))


@dataclass(frozen=True)
class DeviceContext:
    """A device with its primary context current on this thread."""

    index: int
    device: Any  # CUdevice
    context: Any  # CUcontext

    def attribute(self, name: str) -> int:
        return device_attribute(self.device, name)

    @property
    def cc(self) -> tuple[int, int]:
        return (self.attribute("COMPUTE_CAPABILITY_MAJOR"),
                self.attribute("COMPUTE_CAPABILITY_MINOR"))

    def synchronize(self) -> None:
        check(_driver().cuCtxSynchronize(), "cuCtxSynchronize")


@contextlib.contextmanager
def device_context(index: int = 0) -> Iterator[DeviceContext]:
    """Retain the primary context of device ``index``, make it current, release it afterwards."""
    drv = _driver()
    dev = cu_device(index)
    ctx = check(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    try:
        check(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        yield DeviceContext(int(index), dev, ctx)
    finally:
        check(drv.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")


# ---------------------------------------------------------------------------- streams and events

class Stream:
    """A non-blocking stream; use as ``with Stream() as s:``; ``s.handle`` for API calls."""

    def __init__(self) -> None:
        drv = _driver()
        flags = drv.CUstream_flags.CU_STREAM_NON_BLOCKING
        self.handle = check(drv.cuStreamCreate(flags), "cuStreamCreate")

    def synchronize(self) -> None:
        check(_driver().cuStreamSynchronize(self.handle), "cuStreamSynchronize")

    def close(self) -> None:
        if self.handle is not None:
            check(_driver().cuStreamDestroy(self.handle), "cuStreamDestroy")
            self.handle = None

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Event:
    """A timing event (cuEventCreate with default flags, so elapsed time can be read)."""

    def __init__(self) -> None:
        drv = _driver()
        self.handle = check(drv.cuEventCreate(drv.CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate")

    def record(self, stream: Stream) -> None:
        check(_driver().cuEventRecord(self.handle, stream.handle), "cuEventRecord")

    def synchronize(self) -> None:
        check(_driver().cuEventSynchronize(self.handle), "cuEventSynchronize")

    def close(self) -> None:
        if self.handle is not None:
            check(_driver().cuEventDestroy(self.handle), "cuEventDestroy")
            self.handle = None

    def __enter__(self) -> "Event":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def elapsed_ms(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events (waits for ``end``); resolution about 0.5 us."""
    end.synchronize()
    return float(check(_driver().cuEventElapsedTime(start.handle, end.handle), "cuEventElapsedTime"))


# ---------------------------------------------------------------------------- memory

class DeviceBuffer:
    """``nbytes`` of device memory (cuMemAlloc: at least 256-byte aligned). ``ptr`` is an int."""

    def __init__(self, nbytes: int) -> None:
        if nbytes <= 0:
            raise InputError(f"buffer size must be > 0 bytes, got {nbytes}")
        self.nbytes = int(nbytes)
        self.handle = check(_driver().cuMemAlloc(self.nbytes), f"cuMemAlloc({self.nbytes} B)")
        self.ptr = int(self.handle)

    def close(self) -> None:
        if self.handle is not None:
            check(_driver().cuMemFree(self.handle), "cuMemFree")
            self.handle = None

    def __enter__(self) -> "DeviceBuffer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PinnedHostBuffer:
    """``nbytes`` of page-locked host memory (cuMemAllocHost); ``ptr`` is its address as an int."""

    def __init__(self, nbytes: int) -> None:
        if nbytes <= 0:
            raise InputError(f"buffer size must be > 0 bytes, got {nbytes}")
        self.nbytes = int(nbytes)
        self.ptr = int(check(_driver().cuMemAllocHost(self.nbytes), f"cuMemAllocHost({self.nbytes} B)"))

    def close(self) -> None:
        if self.ptr:
            check(_driver().cuMemFreeHost(self.ptr), "cuMemFreeHost")
            self.ptr = 0

    def __enter__(self) -> "PinnedHostBuffer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------- kernels

@dataclass(frozen=True)
class Kernel:
    """A loaded kernel: keep the module referenced as long as the function is used."""

    name: str
    module: Any  # CUmodule
    function: Any  # CUfunction
    compiler: str  # "nvrtc" or the nvcc path used

    def unload(self) -> None:
        check(_driver().cuModuleUnload(self.module), "cuModuleUnload")


def max_active_blocks_per_sm(kernel: Kernel, block_size: int, dynamic_smem: int = 0) -> int:
    """cuOccupancyMaxActiveBlocksPerMultiprocessor for ``kernel`` at ``block_size`` threads."""
    return int(check(
        _driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(kernel.function, block_size, dynamic_smem),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    ))


def launch(kernel: Kernel, grid: int | tuple[int, int, int], block: int | tuple[int, int, int],
           args: Sequence[tuple[Any, str]], stream: Stream, shared_bytes: int = 0) -> None:
    """Launch ``kernel``; ``args`` are ``(value, numpy dtype)`` pairs, e.g. ``(buf.ptr, "u8")``.

    Pointers are passed as ``"u8"`` (64-bit) integers. The values are packed into one numpy
    array each and their addresses handed to cuLaunchKernel as ``kernelParams``.
    """
    import numpy as np  # noqa: PLC0415

    g = (grid, 1, 1) if isinstance(grid, int) else tuple(grid)
    b = (block, 1, 1) if isinstance(block, int) else tuple(block)
    holders = [np.array([value], dtype=dtype) for value, dtype in args]
    addresses = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
    check(_driver().cuLaunchKernel(kernel.function, *g, *b, shared_bytes, stream.handle,
                                   addresses.ctypes.data, 0), f"cuLaunchKernel({kernel.name})")
    del holders  # kept alive until here: cuLaunchKernel copies the values before it returns
