"""The timing engine: one sample taken the NVBench way, with the kernel treated as an adversary.

How one sample is taken:

1. cold mode only: reset persisting L2 lines (cuCtxResetPersistingL2Cache: they would survive any
   flush) and remove an L2 access-policy window from the stream (reported: a kernel that sets one
   is caught), then read a buffer of twice the L2 size (a flush kernel) so the kernel's data is no
   longer in L2;
2. launch a tiny *blocking kernel* that spins until the host releases it (a flag in pinned host
   memory), so the following launches queue up on the GPU instead of trickling in at the speed of
   Python: the events then bracket GPU work only, not host launch overhead;
3. record the start event, launch the work ``batch`` times (1 in cold mode; N in hot mode to
   amortize the event overhead, optionally as one CUDA graph), record the stop event, release the
   blocking kernel;
4. wait for the stop event; then synchronize the whole context and time that wait: work still
   running on another stream (a kernel that moved its work to a side stream) makes it long, and the
   sample is not trusted;
5. the timer object turns the interval into seconds per launch (events less the event floor, raw
   events, or CUPTI kernel records); NVML's SM clock marks the sample throttled below 75 % of the
   maximum.

The *event floor* is the median interval of an event pair with nothing between them, taken the
same way before sampling starts. The events' own processing sits inside every interval; on an H100
it is about 1 us, which made a 5 us kernel read 20 % longer than Nsight Compute's
``gpu__time_duration`` of the same launches (benchmarks/results/h100/measure/timing_probe.json).

The blocking kernel gives up after a timeout (it writes a flag); if that happens (e.g. the work
synchronizes with the device), the sample is discarded and blocking is switched off for the rest
of the run, which is reported in the result's notes.
"""

from __future__ import annotations

import ctypes
import functools
import time
from typing import Any, Callable

import numpy as np

from cudalens.errors import InputError, NoDeviceError
from cudalens.hardware.device import DeviceFacts
from cudalens.hardware.theory import memory_bandwidth
from cudalens.measure.nvml import Nvml as _Nvml
from cudalens.measure.nvml import OtherDevicesWatch
from cudalens.measure.sampling import Collected, Sample, SamplingPolicy, collect, is_throttled, side_work
from cudalens.measure.timers import Timer, make_timer

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


@functools.lru_cache(maxsize=8)
def _internal_cubin(source: str, name: str, cc: tuple[int, int]) -> bytes:
    """The harness's own kernels compiled once per process (a pure function of its arguments)."""
    from cudalens.compiled.runtime_compile import compile_cubin  # noqa: PLC0415

    return compile_cubin(source, name, cc, options=())[0]


def _internal_kernel(source: str, name: str, cc: tuple[int, int]) -> Any:
    cu = _cu()
    image = np.frombuffer(_internal_cubin(source, name, tuple(cc)), dtype=np.uint8)
    drv = cu._driver()
    module = cu.check(drv.cuModuleLoadData(image.ctypes.data), f"cuModuleLoadData({name})")
    return cu.Kernel(name, module, cu.check(drv.cuModuleGetFunction(module, name.encode()), name), "nvrtc")


def _cu():
    try:
        from cudalens.hardware import cuda_driver as cuda_util  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - the shared helper is part of the package
        raise NoDeviceError(f"GPU helpers unavailable ({exc})") from None
    return cuda_util


# ---------------------------------------------------------------------------- device facts

def device_info(index: int = 0) -> DeviceFacts:
    """Facts of device ``index`` from driver attributes (and NVML for the max SM clock)."""
    cu = _cu()
    drv = cu._driver()
    dev = cu.cu_device(index)
    attr = lambda name: cu.device_attribute(dev, name)  # noqa: E731
    name = cu.check(drv.cuDeviceGetName(256, dev), "cuDeviceGetName")
    name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
    mem_khz = attr("MEMORY_CLOCK_RATE")
    bus = attr("GLOBAL_MEMORY_BUS_WIDTH")
    theo = memory_bandwidth(mem_khz * 1e3, bus).gb_per_s if mem_khz and bus else None
    nv = _Nvml.open(index)
    return DeviceFacts(
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
        self.kernel = _internal_kernel(_FLUSH_SRC, "cudalens_l2_flush", ctx.cc)
        self.args = [(self.buffer.ptr, "u8"), (self.buffer.nbytes // 16, "u8"), (self.sink.ptr, "u8")]

    def launch(self, stream: Any) -> None:
        self.cu.launch(self.kernel, FLUSH_GRID, FLUSH_BLOCK, self.args, stream)

    def close(self) -> None:
        for step in (self.buffer.close, self.sink.close, self.kernel.unload):
            try:
                step()
            except Exception:  # noqa: BLE001 - a dead context after a fault; keep the first error
                pass


def _window_attr(drv: Any) -> Any:
    return drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW


class _Engine:
    """Per-run GPU state: events, blocking kernel and flags, L2 flush buffer, NVML, the timer."""

    def __init__(self, ctx: Any, info: DeviceFacts, stream_h: int, cold: bool, timer: Timer,
                 reset_persisting: bool = True, detect_side_work: bool = True) -> None:
        cu = _cu()
        self.cu, self.drv = cu, cu._driver()
        self.stream = _StreamRef(self.drv.CUstream(stream_h))
        self.start, self.stop = cu.Event(), cu.Event()
        self.flags = cu.PinnedHostBuffer(8)  # [release, timed_out]; UVA: host pointer works on device
        self.block_kernel = _internal_kernel(_BLOCKING_SRC, "cudalens_block_stream", ctx.cc)
        self.flush = L2Flush(ctx, info.l2_bytes, self.stream) if cold and info.l2_bytes else None
        self.reset_persisting = cold and reset_persisting
        self.detect_side_work = detect_side_work
        self.nvml = _Nvml.open(info.index)
        self.max_clock = info.max_sm_clock_mhz
        self.blocking = True
        self.notes: list[str] = []
        self.timer = timer
        self.event_floor = 0.0  # seconds subtracted from every event interval (timers that ask)
        self.sync_floor = 0.0  # median context-synchronize wait with nothing else running
        self.sync_p90 = 0.0
        self.windows_seen: list[dict[str, Any]] = []
        self.persisting_resets = 0
        self.graph: Any = None
        self.clocks: list[tuple[float | None, float | None, list[str]]] = []
        timer.open()
        self.notes.extend(getattr(timer, "notes", ()))

    def close(self) -> None:
        self.timer.close()
        for res in (self.start, self.stop, self.flags, self.flush):
            if res is not None:
                try:
                    res.close()
                except Exception:  # noqa: BLE001 - a dead context after a fault; keep the first error
                    pass
        for step in (lambda: self.block_kernel.unload(), self._destroy_graph):
            try:
                step()
            except Exception:  # noqa: BLE001
                pass

    def _flag(self, i: int) -> ctypes.c_int:
        return ctypes.c_int.from_address(self.flags.ptr + 4 * i)

    # ---- adversarial guards ---------------------------------------------------------------
    def _reset_l2_state(self) -> None:
        """Persisting lines back to normal (so the flush can evict them) and no access-policy
        window on the stream; a window found there is recorded (the kernel set one)."""
        drv, cu = self.drv, self.cu
        try:
            value = cu.check(drv.cuStreamGetAttribute(self.stream.handle, _window_attr(drv)), "cuStreamGetAttribute")
            w = value.accessPolicyWindow
            if int(w.num_bytes) > 0:
                self.windows_seen.append({"num_bytes": int(w.num_bytes), "hit_ratio": float(w.hitRatio)})
                w.num_bytes = 0
                w.hitRatio = 0.0
                cu.check(drv.cuStreamSetAttribute(self.stream.handle, _window_attr(drv), value), "cuStreamSetAttribute")
        except Exception as exc:  # noqa: BLE001 - the legacy stream has no attributes
            if not any("access-policy window" in n for n in self.notes):
                self.notes.append(f"access-policy window of the stream not checked ({type(exc).__name__})")
        cu.check(drv.cuCtxResetPersistingL2Cache(), "cuCtxResetPersistingL2Cache")
        self.persisting_resets += 1

    def check_window(self) -> None:
        """Hot mode: record an access-policy window the work left on the stream (not removed: hot
        results keep whatever the work does to L2, but the certificate says so)."""
        drv, cu = self.drv, self.cu
        try:
            value = cu.check(drv.cuStreamGetAttribute(self.stream.handle, _window_attr(drv)), "cuStreamGetAttribute")
            w = value.accessPolicyWindow
            if int(w.num_bytes) > 0:
                self.windows_seen.append({"num_bytes": int(w.num_bytes), "hit_ratio": float(w.hitRatio),
                                          "left_in_place": True})
        except Exception:  # noqa: BLE001 - the legacy stream has no attributes
            pass

    def _other_work_wait(self) -> float:
        """Seconds cuCtxSynchronize waits after the stop event: long when other streams still run."""
        t0 = time.perf_counter()
        self.cu.check(self.drv.cuCtxSynchronize(), "cuCtxSynchronize")
        return time.perf_counter() - t0

    # ---- graphs (timer "graph") -----------------------------------------------------------
    def _destroy_graph(self) -> None:
        if self.graph is not None:
            self.cu.check(self.drv.cuGraphExecDestroy(self.graph), "cuGraphExecDestroy")
            self.graph = None

    def capture(self, enqueue: Callable[[], None], batch: int) -> bool:
        """Capture ``batch`` calls of ``enqueue`` into a graph on the stream; False if it cannot."""
        drv, cu = self.drv, self.cu
        mode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        try:
            cu.check(drv.cuStreamBeginCapture(self.stream.handle, mode), "cuStreamBeginCapture")
            try:
                for _ in range(batch):
                    enqueue()
            finally:
                graph = cu.check(drv.cuStreamEndCapture(self.stream.handle), "cuStreamEndCapture")
            self.graph = cu.check(drv.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
            cu.check(drv.cuGraphDestroy(graph), "cuGraphDestroy")
            return True
        except Exception as exc:  # noqa: BLE001 - not capturable: plain launches
            self.notes.append(f"timer 'graph': the work could not be captured ({exc}); timed with plain launches")
            try:
                cu.check(drv.cuCtxSynchronize(), "cuCtxSynchronize")
            except Exception:  # noqa: BLE001
                pass
            return False

    # ---- one interval ---------------------------------------------------------------------
    def _interval(self, enqueue: Callable[[], None], batch: int) -> tuple[float, float | None]:
        """(seconds between the start and stop events around ``batch`` calls, context wait after)."""
        cu = self.cu
        if self.reset_persisting:
            self._reset_l2_state()
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
            if self.graph is not None:
                cu.check(self.drv.cuGraphLaunch(self.graph, self.stream.handle), "cuGraphLaunch")
            else:
                for _ in range(batch):
                    enqueue()
        finally:
            self.stop.record(self.stream)
            self._flag(0).value = 1
        interval = cu.elapsed_ms(self.start, self.stop) * 1e-3
        wait = self._other_work_wait() if self.detect_side_work else None
        return interval, wait

    def measure_event_floor(self, samples: int = FLOOR_SAMPLES, warmup: int = FLOOR_SAMPLES // 3) -> float:
        """The events' own share of every interval: the median interval of an event pair with
        nothing between them, taken exactly as a sample is (flush, blocking kernel, events), after
        ``warmup`` pairs that are discarded. Also the context-synchronize wait of such a pair, the
        baseline of the side-work check.

        On an H100 this is about 1 us, and without subtracting it a 5 us kernel reads 20 % longer
        than Nsight Compute's gpu__time_duration (benchmarks/results/h100/measure/timing_probe.json).
        """
        graph, self.graph = self.graph, None
        for _ in range(warmup):
            self._interval(lambda: None, 1)
        pairs = [self._interval(lambda: None, 1) for _ in range(samples)]
        self.graph = graph
        floor = float(np.median([p[0] for p in pairs]))
        waits = [p[1] for p in pairs if p[1] is not None]
        self.sync_floor = float(np.median(waits)) if waits else 0.0
        self.sync_p90 = float(np.quantile(waits, 0.9)) if waits else 0.0
        if self.timer.subtract_floor:
            self.event_floor = floor
        return floor

    def side_work_threshold(self) -> float:
        """A context wait above this after the stop event means work elsewhere was still running:
        twice the 90th percentile of the waits measured with nothing else running, and at least
        10 us above their median (host jitter alone crosses it now and then: see side_work)."""
        return max(2 * self.sync_p90, self.sync_floor + 10e-6)

    def sample(self, enqueue: Callable[[], None], batch: int, policy: SamplingPolicy) -> Sample:
        interval, wait = self._interval(enqueue, batch)
        seconds, timer = self.timer.seconds(interval, batch, self.event_floor)
        clock = self.nvml.sm_clock() if self.nvml else None
        if self.nvml and (not self.clocks or len(self.clocks) == 1):
            self.clocks.append((clock, self.nvml.mem_clock(), self.nvml.throttle_reasons()))
        throttled = is_throttled(clock, self.max_clock, policy.throttle_fraction)
        if self.blocking and self._flag(1).value:
            self.blocking = False
            self.notes.append("the blocking kernel timed out (the work synchronized with the device?); "
                              "later samples include host launch gaps")
            throttled = True  # discard: launch gaps may be inside this sample
        return Sample(seconds=seconds, batch=batch, sm_clock_mhz=clock, throttled=throttled,
                      event_seconds=interval / batch, timer=timer, other_work_s=wait)

    def last_clocks(self) -> None:
        if self.nvml:
            self.clocks = self.clocks[:1] + [(self.nvml.sm_clock(), self.nvml.mem_clock(),
                                              self.nvml.throttle_reasons())]


def _choose_batch(engine: _Engine, enqueue: Callable[[], None], policy: SamplingPolicy) -> int:
    probe = [engine.sample(enqueue, 1, policy).seconds for _ in range(3)]
    t = max(min(probe), 1e-7)
    return int(min(MAX_HOT_BATCH, max(1, round(HOT_BATCH_TARGET_S / t))))


def measure(ctx: Any, info: DeviceFacts, enqueue: Callable[[], None], *, stream_h: int, mode: str,
            batch: int | None, policy: SamplingPolicy, clock: Callable[[], float], timer: Any = "events",
            criterion: Any = None, reset_persisting: bool = True, detect_side_work: bool = True,
            ) -> tuple[Any, int, list[str], dict[str, Any]]:
    """Samples of ``enqueue``, the batch size, notes, and the engine's record for the certificate."""
    tm = make_timer(timer)
    if tm.graph and mode == "cold":
        raise InputError("timer 'graph' batches launches: use it in hot mode")
    engine = _Engine(ctx, info, stream_h, cold=(mode == "cold"), timer=tm,
                     reset_persisting=reset_persisting, detect_side_work=detect_side_work)
    try:
        floor = engine.measure_event_floor() if (tm.subtract_floor or detect_side_work) else 0.0
        n = 1 if mode == "cold" else (batch or _choose_batch(engine, enqueue, policy))
        if tm.graph:
            engine.capture(enqueue, n)
        watch = OtherDevicesWatch(info.index) if detect_side_work else None
        if watch is not None:
            watch.start()
        collected = collect(lambda: engine.sample(enqueue, n, policy), policy, clock, criterion=criterion)
        engine.last_clocks()
        others = watch.finish() if watch is not None else {"checked": False, "ok": True}
        if not engine.reset_persisting and reset_persisting:  # hot mode: report a window, leave it
            engine.check_window()
        side = {"checked": False}
        if detect_side_work:
            marked, side = side_work(collected.samples, engine.side_work_threshold())
            if side["found"]:
                collected = Collected(marked, collected.stop, collected.elapsed_s)
        record = {
            "event_floor_s": engine.event_floor, "event_pair_s": floor, "sync_floor_s": engine.sync_floor,
            "timer": tm.describe(), "graph": engine.graph is not None,
            "flush_bytes": engine.flush.buffer.nbytes if engine.flush is not None else 0,
            "persisting_reset": engine.reset_persisting, "persisting_resets": engine.persisting_resets,
            "window_checked": reset_persisting,
            "windows_seen": engine.windows_seen[:3], "windows_seen_count": len(engine.windows_seen),
            "side_work_checked": detect_side_work, "side_work": side,
            "other_devices": others,
            "clocks": [{"sm_mhz": c[0], "mem_mhz": c[1], "throttle_reasons": c[2]} for c in engine.clocks],
            "criterion": (criterion.describe() if criterion is not None and hasattr(criterion, "describe")
                          else {"name": "noise-target", **{k: v for k, v in policy.to_dict().items()}}),
        }
        return collected, n, engine.notes, record
    finally:
        engine.close()
