"""The benchmark harness on a real GPU: ``bench(fn)`` for any callable, ``bench_kernel(...)`` for CUDA C++.

How one sample is taken (NVBench's discipline, our implementation):

1. cold mode only: read a buffer of twice the L2 size (a flush kernel) so the kernel's data is
   no longer in L2;
2. launch a tiny *blocking kernel* that spins until the host releases it (a flag in pinned host
   memory), so the following launches queue up on the GPU instead of trickling in at the speed of
   Python: the events then bracket GPU work only, not host launch overhead;
3. record the start event, launch the kernel ``batch`` times (1 in cold mode; N in hot mode to
   amortize the event overhead), record the stop event, release the blocking kernel;
4. wait for the stop event: the sample is (elapsed time - event floor) / batch; read the SM clock
   from NVML and mark the sample throttled when it is below 75 % of the maximum SM clock.

The *event floor* is the median interval of an event pair with nothing between them, taken the
same way before sampling starts. The events' own processing sits inside every interval; on an H100
it is about 1 us, which made a 5 us kernel read 20 % longer than Nsight Compute's
``gpu__time_duration`` of the same launches (benchmarks/results/h100/measure/timing_probe.json).
``timer="events-raw"`` keeps the interval as it is; every sample keeps its raw interval anyway.

The blocking kernel gives up after a timeout (it writes a flag); if that happens (e.g. ``fn``
synchronizes with the device), the sample is discarded and blocking is switched off for the rest
of the run, which is reported in the result's notes.

Everything GPU-related is imported lazily; without a GPU, :class:`NoDeviceError` is raised.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from cudalens.errors import CudalensError, InputError, NoDeviceError
from cudalens.measure.argspec import ArgSpec, materialize
from cudalens.measure.result import BenchResult, DeviceInfo, code_hash
from cudalens.measure.sampling import Sample, SamplingPolicy, collect, is_throttled
from cudalens.measure.stats import summarize
from cudalens.measure.throughput import Ceilings, assess_throughput

MAX_HOT_BATCH = 64
HOT_BATCH_TARGET_S = 200e-6  # hot mode: launches per sample so one sample lasts about this long
BLOCK_TIMEOUT_NS = 500_000_000  # the blocking kernel waits at most 0.5 s for the host
FLOOR_SAMPLES = 31  # event pairs with nothing between them, for the event floor

FLUSH_GRID, FLUSH_BLOCK = 1024, 512

# Reads the whole flush buffer (16-byte loads) to evict everything else from L2. The sum is written
# only if it equals an impossible value, so the loads cannot be optimized away and nothing is
# written in practice.
_FLUSH_SRC = r"""
extern "C" __global__ void cudalens_l2_flush(const int4* __restrict__ buf, unsigned long long n,
                                             int* __restrict__ sink)
{
    int acc = 0;
    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += (unsigned long long)gridDim.x * blockDim.x) {
        const int4 v = buf[k];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7f3a5c21) sink[0] = acc;
}
"""

_BLOCKING_SRC = r"""
extern "C" __global__ void cudalens_block_stream(volatile int* release, volatile int* timed_out,
                                                 unsigned long long timeout_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*release == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) { *timed_out = 1; break; }
    }
}
"""


def _cu():
    try:
        from cudalens.measure import cuda_util  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - the shared helper is part of the package
        raise NoDeviceError(f"GPU helpers unavailable ({exc})") from None
    return cuda_util


# ---------------------------------------------------------------------------- device facts

def device_info(index: int = 0) -> DeviceInfo:
    """Facts of device ``index`` from driver attributes (and NVML for the max SM clock)."""
    cu = _cu()
    drv = cu._driver()
    dev = cu.cu_device(index)
    attr = lambda name: cu.device_attribute(dev, name)  # noqa: E731
    name = cu.check(drv.cuDeviceGetName(256, dev), "cuDeviceGetName")
    name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
    mem_khz = attr("MEMORY_CLOCK_RATE")
    bus = attr("GLOBAL_MEMORY_BUS_WIDTH")
    theo = 2.0 * mem_khz * 1e3 * (bus / 8) / 1e9 if mem_khz and bus else None
    nv = _Nvml.open(index)
    return DeviceInfo(
        name=name,
        index=index,
        cc=f"{attr('COMPUTE_CAPABILITY_MAJOR')}.{attr('COMPUTE_CAPABILITY_MINOR')}",
        driver_version=nv.driver_version() if nv else "",
        cuda_version=cu.version_text(cu.driver_version()),
        sm_count=attr("MULTIPROCESSOR_COUNT"),
        l2_bytes=attr("L2_CACHE_SIZE"),
        mem_clock_mhz=mem_khz / 1e3,
        bus_width_bits=bus,
        max_sm_clock_mhz=nv.max_sm_clock() if nv else None,
        theoretical_bandwidth_gbs=theo,
    )


class _Nvml:
    """SM clock readings through nvidia-ml-py; ``open`` returns None when NVML is unusable."""

    def __init__(self, mod: Any, handle: Any) -> None:
        self.mod, self.handle = mod, handle

    @classmethod
    def open(cls, index: int) -> "_Nvml | None":
        try:
            import pynvml  # noqa: PLC0415

            pynvml.nvmlInit()
            cu = _cu()
            bus_id = cu.check(cu._driver().cuDeviceGetPCIBusId(32, cu.cu_device(index)), "cuDeviceGetPCIBusId")
            bus_id = bus_id.split(b"\0", 1)[0] if isinstance(bus_id, bytes) else bus_id
            try:
                handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
            except Exception:  # noqa: BLE001 - fall back to the index
                handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            return cls(pynvml, handle)
        except Exception:  # noqa: BLE001 - no NVML: clocks unknown, no throttle detection
            return None

    def sm_clock(self) -> float | None:
        try:
            return float(self.mod.nvmlDeviceGetClockInfo(self.handle, self.mod.NVML_CLOCK_SM))
        except Exception:  # noqa: BLE001
            return None

    def max_sm_clock(self) -> float | None:
        try:
            return float(self.mod.nvmlDeviceGetMaxClockInfo(self.handle, self.mod.NVML_CLOCK_SM))
        except Exception:  # noqa: BLE001
            return None

    def driver_version(self) -> str:
        try:
            v = self.mod.nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else str(v)
        except Exception:  # noqa: BLE001
            return ""


# ---------------------------------------------------------------------------- the timing engine

class _StreamRef:
    """A stream handle in the shape cuda_util expects (``.handle``)."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle


def stream_handle(stream: Any) -> int:
    """Raw CUstream value of a PyTorch, CuPy or cuda.core stream, an int, or None (legacy default, 0)."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    if hasattr(stream, "__cuda_stream__"):  # cuda.core and the CUDA stream protocol
        return int(stream.__cuda_stream__()[1])
    if hasattr(stream, "handle"):
        return int(stream.handle)
    raise InputError(f"cannot get a CUDA stream handle from {type(stream).__name__}")


class L2Flush:
    """Evicts everything from L2 by reading a buffer of twice its size (``launch``, on a stream).

    The buffer is written once; from then on the flush only reads it, so the lines it leaves in L2
    are clean and the timed kernel never pays for their write-back (a memset flush leaves dirty
    lines: measured 2.8 % slow on a 229 us DRAM-bound kernel on an H100).
    """

    def __init__(self, ctx: Any, l2_bytes: int, stream: Any) -> None:
        cu = _cu()
        self.cu = cu
        self.buffer = cu.DeviceBuffer(2 * l2_bytes)
        self.sink = cu.DeviceBuffer(16)
        cu.check(cu._driver().cuMemsetD8Async(self.buffer.handle, 0, self.buffer.nbytes, stream.handle),
                 "cuMemsetD8Async(L2 flush buffer)")
        self.kernel = cu.compile_kernel(_FLUSH_SRC, "cudalens_l2_flush", ctx.cc, options=())
        self.args = [(self.buffer.ptr, "u8"), (self.buffer.nbytes // 16, "u8"), (self.sink.ptr, "u8")]

    def launch(self, stream: Any) -> None:
        self.cu.launch(self.kernel, FLUSH_GRID, FLUSH_BLOCK, self.args, stream)

    def close(self) -> None:
        for step in (self.buffer.close, self.sink.close, self.kernel.unload):
            try:
                step()
            except Exception:  # noqa: BLE001 - a dead context after a fault; keep the first error
                pass


class _Engine:
    """Per-run GPU state: events, blocking kernel and flags, L2 flush buffer, NVML."""

    def __init__(self, ctx: Any, info: DeviceInfo, stream_h: int, cold: bool, timer: str = "events") -> None:
        cu = _cu()
        self.cu, self.drv = cu, cu._driver()
        self.stream = _StreamRef(self.drv.CUstream(stream_h))
        self.start, self.stop = cu.Event(), cu.Event()
        self.flags = cu.PinnedHostBuffer(8)  # [release, timed_out]; UVA: host pointer works on device
        self.block_kernel = cu.compile_kernel(_BLOCKING_SRC, "cudalens_block_stream", ctx.cc, options=())
        self.flush = L2Flush(ctx, info.l2_bytes, self.stream) if cold and info.l2_bytes else None
        self.nvml = _Nvml.open(info.index)
        self.max_clock = info.max_sm_clock_mhz
        self.blocking = True
        self.notes: list[str] = []
        self.kernel_clock = None
        self.event_floor = 0.0  # seconds subtracted from every event interval (timer "events")
        self.timer_name = "events-raw" if timer == "events-raw" else "events"
        if timer in ("auto", "cupti"):
            from cudalens.measure.kernel_clock import open_kernel_clock  # noqa: PLC0415

            self.kernel_clock, why = open_kernel_clock()
            if self.kernel_clock is None:
                if timer == "cupti":
                    raise CudalensError(f"timer 'cupti' asked for, but {why}")
                self.notes.append(f"timed with CUDA events: {why}")

    def close(self) -> None:
        if self.kernel_clock is not None:
            self.kernel_clock.close()
        for res in (self.start, self.stop, self.flags, self.flush):
            if res is not None:
                try:
                    res.close()
                except Exception:  # noqa: BLE001 - a dead context after a fault; keep the first error
                    pass
        try:
            self.block_kernel.unload()
        except Exception:  # noqa: BLE001
            pass

    def _flag(self, i: int) -> ctypes.c_int:
        return ctypes.c_int.from_address(self.flags.ptr + 4 * i)

    def _interval(self, enqueue: Callable[[], None], batch: int) -> float:
        """Seconds between the start and stop events around ``batch`` calls of ``enqueue``."""
        cu = self.cu
        if self.flush is not None:
            self.flush.launch(self.stream)
        if self.blocking:
            self._flag(0).value = 0
            self._flag(1).value = 0
            cu.launch(self.block_kernel, 1, 1,
                      [(self.flags.ptr, "u8"), (self.flags.ptr + 4, "u8"), (BLOCK_TIMEOUT_NS, "u8")],
                      self.stream)
        self.start.record(self.stream)
        try:
            for _ in range(batch):
                enqueue()
        finally:
            self.stop.record(self.stream)
            self._flag(0).value = 1
        return cu.elapsed_ms(self.start, self.stop) * 1e-3

    def measure_event_floor(self, samples: int = FLOOR_SAMPLES, warmup: int = FLOOR_SAMPLES // 3) -> float:
        """The events' own share of every interval: the median interval of an event pair with
        nothing between them, taken exactly as a sample is (flush, blocking kernel, events), after
        ``warmup`` pairs that are discarded.

        On an H100 this is about 1 us, and without subtracting it a 5 us kernel reads 20 % longer
        than Nsight Compute's gpu__time_duration (benchmarks/results/h100/measure/timing_probe.json).
        """
        for _ in range(warmup):
            self._interval(lambda: None, 1)
        floor = float(np.median([self._interval(lambda: None, 1) for _ in range(samples)]))
        self.event_floor = floor
        return floor

    def sample(self, enqueue: Callable[[], None], batch: int, policy: SamplingPolicy) -> Sample:
        interval = self._interval(enqueue, batch)
        event_s = interval / batch
        seconds, timer = max(0.0, interval - self.event_floor) / batch, self.timer_name
        if self.kernel_clock is not None:
            from cudalens.measure.kernel_clock import user_kernel_seconds  # noqa: PLC0415

            kernel_s = user_kernel_seconds(self.kernel_clock.drain(), batch)
            if kernel_s is not None:
                seconds, timer = kernel_s, "cupti"
        clock = self.nvml.sm_clock() if self.nvml else None
        throttled = is_throttled(clock, self.max_clock, policy.throttle_fraction)
        if self.blocking and self._flag(1).value:
            self.blocking = False
            self.notes.append("the blocking kernel timed out (the work synchronized with the device?); "
                              "later samples include host launch gaps")
            throttled = True  # discard: launch gaps may be inside this sample
        return Sample(seconds=seconds, batch=batch, sm_clock_mhz=clock, throttled=throttled,
                      event_seconds=event_s, timer=timer)


def _choose_batch(engine: _Engine, enqueue: Callable[[], None], policy: SamplingPolicy) -> int:
    probe = [engine.sample(enqueue, 1, policy).seconds for _ in range(3)]
    t = max(min(probe), 1e-7)
    return int(min(MAX_HOT_BATCH, max(1, round(HOT_BATCH_TARGET_S / t))))


def _measure(
    ctx: Any,
    info: DeviceInfo,
    enqueue: Callable[[], None],
    *,
    stream_h: int,
    mode: str,
    batch: int | None,
    policy: SamplingPolicy,
    clock: Callable[[], float],
    timer: str = "events",
) -> tuple[Any, int, list[str], float]:
    """Samples of ``enqueue``, the batch size, notes, and the event floor subtracted (seconds)."""
    engine = _Engine(ctx, info, stream_h, cold=(mode == "cold"), timer=timer)
    try:
        if timer != "events-raw":
            engine.measure_event_floor()
        if mode == "cold":
            n = 1
        else:
            n = batch or _choose_batch(engine, enqueue, policy)
        collected = collect(lambda: engine.sample(enqueue, n, policy), policy, clock)
        return collected, n, engine.notes, engine.event_floor
    finally:
        engine.close()


def _ceilings(info: DeviceInfo, extra: Ceilings | None) -> Ceilings:
    base = extra or Ceilings()
    return Ceilings(
        theoretical_bandwidth_gbs=base.theoretical_bandwidth_gbs or info.theoretical_bandwidth_gbs,
        measured_bandwidth_gbs=base.measured_bandwidth_gbs,
        theoretical_gflops=base.theoretical_gflops,
        measured_gflops=base.measured_gflops,
        l2_bytes=base.l2_bytes or info.l2_bytes or None,
        sources=dict(base.sources) or {"theoretical_bandwidth_gbs": "2 x memory clock x bus width / 8"},
    )


def _finish(kernel: str, mode: str, info: DeviceInfo, config: dict[str, Any], collected: Any,
            notes: list[str], bytes_rw: tuple[int, int], flops: float, ceilings: Ceilings | None,
            verification: dict[str, Any] | None, chash: str) -> BenchResult:
    good = collected.kept_seconds
    if len(good) < 2:
        raise CudalensError(
            f"only {len(good)} usable samples of {len(collected.samples)} ({collected.throttled_count} "
            "throttled or discarded); the GPU clock stayed below 75 % of its maximum"
        )
    summary = summarize(good)
    thr = None
    if bytes_rw[0] + bytes_rw[1] > 0 or flops > 0:
        thr = assess_throughput(summary.median, bytes_rw[0], bytes_rw[1], flops,
                                _ceilings(info, ceilings), hot=(mode != "cold")).to_dict()
    return BenchResult(kernel=kernel, mode=mode, device=info, config=config, samples=collected.samples,
                       stop_reason=collected.stop, summary=summary, throughput=thr,
                       verification=verification, code_hash=chash, notes=tuple(notes))


TIMERS = ("auto", "cupti", "events", "events-raw")


def _check_timer(timer: str) -> str:
    """``events`` (default): CUDA events around the launches, less the event floor (the interval of
    an event pair with nothing between them, measured at the start of the run). ``events-raw``: the
    event interval as it is. ``cupti``: the kernels' own activity records (required); ``auto``: CUPTI
    when available, else events. See measure/kernel_clock.py for what CUPTI timing measured on an
    H100: 0.5-1.2 us shorter than ncu's duration for kernels under 10 us, and it slowed DRAM-bound
    kernels by 7 % while tracing was on, so it is opt-in."""
    if timer not in TIMERS:
        raise InputError(f"timer {timer!r}: choose from {', '.join(TIMERS)}")
    return timer


def _timer_used(collected: Any) -> str:
    used = {s.timer for s in collected.samples}
    return used.pop() if len(used) == 1 else "mixed: " + ", ".join(sorted(used))


def _policy(policy: SamplingPolicy | None, overrides: Mapping[str, Any]) -> SamplingPolicy:
    base = (policy or SamplingPolicy()).to_dict()
    base.update({k: v for k, v in overrides.items() if v is not None})
    return SamplingPolicy(**base)


def bench(
    fn: Callable[[], Any],
    *,
    stream: Any = None,
    mode: str = "hot",
    batch: int | None = None,
    name: str | None = None,
    bytes_read: int = 0,
    bytes_written: int = 0,
    flops: float = 0.0,
    ceilings: Ceilings | None = None,
    policy: SamplingPolicy | None = None,
    timer: str = "events",
    device: int = 0,
    clock: Callable[[], float] = time.perf_counter,
    **policy_overrides: Any,
) -> BenchResult:
    """Time ``fn``, a callable that enqueues GPU work on ``stream`` (PyTorch, CuPy, Triton, cuda.core).

    ``stream``: the stream ``fn`` launches on (a torch/CuPy/cuda.core stream, a raw handle, or None
    for the legacy default stream that PyTorch and CuPy use unless told otherwise). ``mode``:
    ``"hot"`` (batches of calls between the events) or ``"cold"`` (L2 flushed before every call).
    ``fn`` must not synchronize with the device; if it does, the harness notices and says so.
    Policy fields (``noise_target``, ``max_time_s``, ...) may be passed as keywords.
    """
    if mode not in ("hot", "cold"):
        raise InputError(f"mode must be 'hot' or 'cold', not {mode!r}")
    cu = _cu()
    pol = _policy(policy, policy_overrides)
    with cu.device_context(device) as ctx:
        info = device_info(device)
        collected, n, notes, floor = _measure(ctx, info, fn, stream_h=stream_handle(stream), mode=mode,
                                              batch=batch, policy=pol, clock=clock, timer=_check_timer(timer))
    config = {"batch": n, "policy": pol.to_dict(), "stream": stream_handle(stream), "timer": _timer_used(collected),
              "event_floor_s": floor}
    label = name or getattr(fn, "__name__", "callable")
    return _finish(label, mode, info, config, collected, notes, (bytes_read, bytes_written), flops,
                   ceilings, None, "")


# ---------------------------------------------------------------------------- CUDA C++ kernels

def _read_source(source_or_path: str | os.PathLike) -> tuple[str, str]:
    text = os.fspath(source_or_path)
    if "\n" not in text and (text.endswith((".cu", ".cuh")) or os.path.exists(text)):
        if not os.path.isfile(text):
            raise InputError(f"{text}: no such CUDA source file")
        with open(text, encoding="utf-8") as fh:
            return fh.read(), text
    return text, "<string>"


def _host_args(args: Sequence[Any], seed: int) -> tuple[list[Any], list[ArgSpec | None]]:
    rng = np.random.default_rng(seed)
    values: list[Any] = []
    specs: list[ArgSpec | None] = []
    for i, a in enumerate(args):
        if isinstance(a, ArgSpec):
            values.append(materialize(a, rng))
            specs.append(a)
        elif isinstance(a, np.ndarray):
            values.append(np.ascontiguousarray(a))
            specs.append(None)
        elif isinstance(a, np.generic):
            values.append(a)
            specs.append(None)
        else:
            raise InputError(
                f"argument {i}: {type(a).__name__} is not a numpy array or numpy scalar; write e.g. "
                "np.int32(n) or np.float32(x) so the C type is explicit"
            )
    return values, specs


def _expected(verify: Any, host_inputs: list[Any]) -> dict[int, np.ndarray] | None:
    if verify is None:
        return None
    expected = verify([v.copy() if isinstance(v, np.ndarray) else v for v in host_inputs]) if callable(verify) else verify
    if not isinstance(expected, Mapping):
        raise InputError("verify must be a dict {argument index: expected array} or a callable returning one")
    out = {}
    for k, v in expected.items():
        if not 0 <= int(k) < len(host_inputs) or not isinstance(host_inputs[int(k)], np.ndarray):
            raise InputError(f"verify names argument {k}, which is not an array argument")
        out[int(k)] = np.asarray(v)
    return out


def check_outputs(actual: Mapping[int, np.ndarray], expected: Mapping[int, np.ndarray],
                  rtol: float, atol: float) -> dict[str, Any]:
    """Compare outputs with references: |a - e| <= atol + rtol * |e| elementwise (numpy.isclose)."""
    per_arg = {}
    ok = True
    for idx, exp in expected.items():
        got = np.asarray(actual[idx]).reshape(exp.shape) if exp.size == np.asarray(actual[idx]).size else actual[idx]
        if np.shape(got) != exp.shape:
            per_arg[str(idx)] = {"ok": False, "reason": f"shape {np.shape(got)} != {exp.shape}"}
            ok = False
            continue
        close = np.isclose(got, exp, rtol=rtol, atol=atol, equal_nan=True)
        bad = int(close.size - int(close.sum()))
        diff = np.abs(got.astype(np.float64) - exp.astype(np.float64))
        per_arg[str(idx)] = {"ok": bad == 0, "mismatches": bad, "elements": int(close.size),
                             "max_abs_error": float(np.nanmax(diff)) if diff.size else 0.0}
        ok = ok and bad == 0
    return {"ok": ok, "rtol": rtol, "atol": atol, "rule": "|actual - expected| <= atol + rtol*|expected|",
            "arguments": per_arg}


def bench_kernel(
    source_or_path: str | os.PathLike,
    kernel_name: str,
    grid: int | Sequence[int],
    block: int | Sequence[int],
    args: Sequence[Any],
    shared_mem: int = 0,
    *,
    defines: Mapping[str, Any] | None = None,
    options: Sequence[str] = (),
    verify: Any = None,
    rtol: float = 1e-5,
    atol: float = 1e-8,
    roles: Sequence[str] | None = None,
    mode: str = "cold",
    batch: int | None = None,
    bytes_read: int | None = None,
    bytes_written: int | None = None,
    flops: float = 0.0,
    ceilings: Ceilings | None = None,
    policy: SamplingPolicy | None = None,
    timer: str = "events",
    device: int = 0,
    seed: int = 0,
    clock: Callable[[], float] = time.perf_counter,
    **policy_overrides: Any,
) -> BenchResult:
    """Compile ``kernel_name`` (declared ``extern "C"``) with NVRTC, run it on copies of ``args``, time it.

    ``args``: numpy arrays (copied to the device; the kernel gets a pointer), numpy scalars (their
    type is the C type: ``np.int32`` -> ``int``), or :class:`ArgSpec` from the CLI grammar.
    ``verify``: ``{arg index: expected array}`` or a callable taking the host inputs and returning
    one; the kernel is run once on fresh inputs and those outputs are compared (``rtol``/``atol``,
    numpy.isclose). Verification failure does not stop the timing; it is in ``result.verification``.
    ``roles`` ("in"/"out"/"inout" per argument) decide the byte counts when ``bytes_read`` /
    ``bytes_written`` are not given: by default arrays are read, and verified arrays written.
    """
    if mode not in ("hot", "cold"):
        raise InputError(f"mode must be 'hot' or 'cold', not {mode!r}")
    source, origin = _read_source(source_or_path)
    host, specs = _host_args(args, seed)
    expected = _expected(verify, host)
    role_of = _roles(host, specs, roles, expected)
    br = bytes_read if bytes_read is not None else sum(
        v.nbytes for v, r in zip(host, role_of) if isinstance(v, np.ndarray) and r in ("in", "inout"))
    bw = bytes_written if bytes_written is not None else sum(
        v.nbytes for v, r in zip(host, role_of) if isinstance(v, np.ndarray) and r in ("out", "inout"))
    opts = list(options) + [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in (defines or {}).items()]
    g = (grid,) if isinstance(grid, int) else tuple(grid)
    b = (block,) if isinstance(block, int) else tuple(block)
    g3 = tuple(g) + (1,) * (3 - len(g))
    b3 = tuple(b) + (1,) * (3 - len(b))
    pol = _policy(policy, policy_overrides)
    cu = _cu()
    with cu.device_context(device) as ctx:
        info = device_info(device)
        try:
            kern = cu.compile_kernel(source, kernel_name, ctx.cc, options=opts)
        except cu.CudaCallError as exc:
            if "NOT_FOUND" in str(exc):
                raise InputError(f"kernel {kernel_name!r} not found in {origin}; declare it extern \"C\"") from None
            raise
        buffers = []
        try:
            packed = []
            for v in host:
                if isinstance(v, np.ndarray):
                    buf = cu.DeviceBuffer(max(v.nbytes, 1))
                    buffers.append(buf)
                    packed.append((buf.ptr, "u8"))
                else:
                    packed.append((v, v.dtype.str))
            stream = cu.Stream()
            buffers.append(stream)

            def upload() -> None:
                for v, (ptr, _) in zip(host, packed):
                    if isinstance(v, np.ndarray) and v.nbytes:
                        cu.check(cu._driver().cuMemcpyHtoD(ptr, v.ctypes.data, v.nbytes), "cuMemcpyHtoD")

            def enqueue() -> None:
                cu.launch(kern, g3, b3, packed, stream, shared_mem)

            upload()
            verification = None
            if expected is not None:
                enqueue()
                stream.synchronize()
                actual = {}
                for idx in expected:
                    out = np.empty_like(host[idx])
                    cu.check(cu._driver().cuMemcpyDtoH(out.ctypes.data, packed[idx][0], out.nbytes), "cuMemcpyDtoH")
                    actual[idx] = out
                verification = check_outputs(actual, expected, rtol, atol)
                upload()
            collected, n, notes, floor = _measure(ctx, info, enqueue, stream_h=int(stream.handle), mode=mode,
                                                  batch=batch, policy=pol, clock=clock, timer=_check_timer(timer))
        finally:  # after a kernel fault the context is dead: cleanup errors must not hide the fault
            for res in [*reversed(buffers), kern]:
                try:
                    res.close() if hasattr(res, "close") else res.unload()
                except Exception:  # noqa: BLE001
                    pass
    config = {
        "grid": list(g3), "block": list(b3), "shared_mem_bytes": shared_mem, "batch": n,
        "args": [s.text if s is not None else _describe(v) for v, s in zip(host, specs)],
        "roles": role_of, "options": opts, "source": origin, "policy": pol.to_dict(),
        "timer": _timer_used(collected), "event_floor_s": floor,
    }
    return _finish(kernel_name, mode, info, config, collected, notes, (br, bw), flops, ceilings,
                   verification, code_hash(source))


def _describe(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"{v.dtype.name}[{v.size}]"
    return f"{v.dtype.name}={v.item()}"


def _roles(host: list[Any], specs: list[ArgSpec | None], roles: Sequence[str] | None,
           expected: Mapping[int, Any] | None) -> list[str]:
    if roles is not None:
        if len(roles) != len(host):
            raise InputError(f"roles has {len(roles)} entries for {len(host)} arguments")
        bad = [r for r in roles if r not in ("in", "out", "inout", "scalar")]
        if bad:
            raise InputError(f"unknown role {bad[0]!r} (in, out or inout)")
        return list(roles)
    out = []
    for i, (v, s) in enumerate(zip(host, specs)):
        if not isinstance(v, np.ndarray):
            out.append("scalar")
        elif s is not None:
            out.append(s.role)
        elif expected and i in expected:
            out.append("out")
        else:
            out.append("in")
    return out
