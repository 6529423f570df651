"""The adversarial suite: callables that try to look faster than they are (our own kernels).

Each adversary has ``run(stream_handle)`` (enqueue one call on that stream), ``outputs`` (device
arrays with __cuda_array_interface__), ``bytes_moved`` (compulsory DRAM traffic) and ``reset()``.
Used by bench_suite_gpu.py (cudalens, triton.testing.do_bench) and _adv_cuda_bench.py (cuda-bench).
"""

from __future__ import annotations

import os

import numpy as np

from cudalens.hardware import cuda_driver as cu
from cudalens.measure.kernels import compile_named

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["adv_copy", "adv_cached", "adv_first_only", "adv_mark", "adv_reset", "adv_token", "adv_l2_sum", "adv_batch_sum"]
BLOCK = 512


class DevArray:
    def __init__(self, ptr: int, n: int) -> None:
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (ptr, False), "version": 3}


class Module:
    """One module (one copy of the adversaries' device globals) with every kernel in it."""

    def __init__(self, cc):
        src = open(os.path.join(HERE, "adversarial_kernels.cu")).read()
        cubin = compile_named(src, NAMES, cc, compiler="nvrtc")
        drv = cu._driver()
        self._image = np.frombuffer(cubin.cubin, dtype=np.uint8)
        self.module = cu.check(drv.cuModuleLoadData(self._image.ctypes.data), "cuModuleLoadData")
        self.k = {n: cu.Kernel(n, self.module, cu.check(drv.cuModuleGetFunction(self.module, cubin.symbol(n).encode()),
                                                        n), "nvrtc") for n in NAMES}
        self._packed = {}  # (name, args) -> (value holders, kernelParams array): packed once
        self._streams = {}  # raw handle -> CUstream

    def launch(self, name, grid, args, stream_h):
        """cuLaunchKernel with arguments packed once per (kernel, arguments): a few us of Python per
        launch instead of cu.launch's ~10, so the peers' hot loops are not bound by the host."""
        key = (name, tuple(args))
        packed = self._packed.get(key)
        if packed is None:
            holders = [np.array([v], dtype=t) for v, t in args]
            packed = self._packed[key] = (holders, np.array([h.ctypes.data for h in holders], dtype=np.uint64))
        stream = self._streams.get(stream_h)
        if stream is None:
            stream = self._streams[stream_h] = cu._driver().CUstream(int(stream_h))
        err = cu._driver().cuLaunchKernel(self.k[name].function, grid, 1, 1, BLOCK, 1, 1, 0, stream,
                                          packed[1].ctypes.data, 0)
        if int(err[0]) != 0:
            cu.check(err, f"cuLaunchKernel({name})")


class _S:
    def __init__(self, h):
        self.handle = cu._driver().CUstream(int(h))


class Adversary:
    kind = "honest"
    what = "dst = 2 * src, honest"
    kernel = "adv_copy"
    marks = False  # launch adv_mark after the work (the adversaries that remember their calls)

    def __init__(self, mod: Module, n: int, device_info=None) -> None:
        self.mod, self.n = mod, n
        self.src = cu.DeviceBuffer(4 * n)
        self.dst = cu.DeviceBuffer(4 * n)
        host = np.random.default_rng(1).random(n, dtype=np.float32)
        cu.check(cu._driver().cuMemcpyHtoD(self.src.ptr, host.ctypes.data, 4 * n), "cuMemcpyHtoD")
        self.reference = 2.0 * host
        self.outputs = [DevArray(self.dst.ptr, n)]
        self.bytes_read, self.bytes_written = 4 * n, 4 * n
        self.grid = min(max(1, (n // 4 + BLOCK - 1) // BLOCK), 132 * 64)
        self.reset()

    def args(self):
        return [(self.src.ptr, "u8"), (self.dst.ptr, "u8"), (self.n // 4, "i8")]

    def reset(self) -> None:
        self.mod.launch("adv_reset", 1, [], 0)
        cu.check(cu._driver().cuCtxSynchronize(), "sync")

    def run(self, stream_h: int) -> None:
        self.mod.launch(self.kernel, self.grid, self.args(), stream_h)
        if self.marks:
            self.mod.launch("adv_mark", 1, [(self.dst.ptr, "u8")], stream_h)

    def close(self) -> None:
        self.src.close()
        self.dst.close()


class PersistingWindow(Adversary):
    kind = "persisting-window"
    what = "sets a persisting L2 access-policy window over its input on the stream (once, at its first call)"

    def __init__(self, mod, n, device_info=None):
        super().__init__(mod, n)
        drv = cu._driver()
        dev = cu.cu_device(0)
        self.max_persist = cu.device_attribute(dev, "MAX_PERSISTING_L2_CACHE_SIZE")
        cu.check(drv.cuCtxSetLimit(drv.CUlimit.CU_LIMIT_PERSISTING_L2_CACHE_SIZE, self.max_persist), "cuCtxSetLimit")
        self.window_bytes = min(4 * n, self.max_persist)
        self.streams_set = set()
        self.all_streams = set()  # every stream a window was set on (reset() forgets only streams_set)

    def reset(self):
        super().reset()
        self.streams_set = set()

    def run(self, stream_h):
        if stream_h not in self.streams_set:
            self._set_window(stream_h)
            self.streams_set.add(stream_h)
            self.all_streams.add(stream_h)
        super().run(stream_h)

    def _set_window(self, stream_h, nbytes=None):
        drv = cu._driver()
        attr = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW
        v = drv.CUstreamAttrValue()
        w = v.accessPolicyWindow
        w.base_ptr = self.src.ptr
        w.num_bytes = self.window_bytes if nbytes is None else nbytes
        w.hitRatio = 1.0 if nbytes is None else 0.0
        w.hitProp = drv.CUaccessProperty.CU_ACCESS_PROPERTY_PERSISTING
        w.missProp = drv.CUaccessProperty.CU_ACCESS_PROPERTY_STREAMING
        cu.check(drv.cuStreamSetAttribute(_S(stream_h).handle, attr, v), "cuStreamSetAttribute")

    def close(self):
        drv = cu._driver()
        for h in self.all_streams:  # leave no window behind on a stream the next adversary uses
            self._set_window(h, 0)
        cu.check(drv.cuCtxResetPersistingL2Cache(), "reset")
        super().close()


class CachedByPointer(Adversary):
    kind = "cached-by-pointer"
    what = "skips all work when called again with the same output pointer"
    kernel = "adv_cached"
    marks = True


class FirstCallOnly(Adversary):
    kind = "right-first-call-only"
    what = "does the whole work on its first call, the first quarter afterwards"
    kernel = "adv_first_only"
    marks = True


class SideStream(Adversary):
    kind = "side-stream"
    what = "does the work on a private stream; leaves a no-op kernel on the timed stream"

    def __init__(self, mod, n, device_info=None):
        super().__init__(mod, n)
        self.side = cu.Stream()

    def run(self, stream_h):
        self.mod.launch("adv_copy", self.grid, self.args(), int(self.side.handle))
        self.mod.launch("adv_token", 1, [(self.dst.ptr, "u8")], stream_h)

    def close(self):
        self.side.close()
        super().close()


class L2Resident(Adversary):
    kind = "l2-resident"
    what = ("reads {mb} MB once per call (per-block sums, 4 independent 16-byte loads in flight per thread): "
            "called again, its data is still in the 50 MB L2 unless flushed")
    kernel = "adv_l2_sum"

    def __init__(self, mod, n, device_info=None):
        super().__init__(mod, n)
        self.what = self.what.format(mb=round(4 * n / 2**20))
        self.grid = 4 * cu.device_attribute(cu.cu_device(0), "MULTIPROCESSOR_COUNT")  # 2048 threads per SM
        self.outputs = [DevArray(self.dst.ptr, self.grid)]
        self.bytes_written = 4 * self.grid


class L2Aliased(Adversary):
    kind = "l2-aliased"
    what = ("sums a batch of {entries} inputs of {mb} MB that all alias one buffer (a batch built by "
            "broadcasting one tensor): {claimed} MB of claimed compulsory reads, {mb} MB in memory, "
            "so every entry after the first is read from L2")
    kernel = "adv_batch_sum"
    entries = 16

    def __init__(self, mod, n, device_info=None):
        super().__init__(mod, n)
        self.what = self.what.format(entries=self.entries, mb=round(4 * n / 1e6), claimed=round(self.entries * 4 * n / 1e6))
        self.grid = self.entries * (4 * cu.device_attribute(cu.cu_device(0), "MULTIPROCESSOR_COUNT") // self.entries)
        self.outputs = [DevArray(self.dst.ptr, self.grid)]
        self.bytes_read = self.entries * 4 * n  # what the batch's argument roles claim
        self.bytes_written = 4 * self.grid

    def args(self):
        return [(self.src.ptr, "u8"), (self.dst.ptr, "u8"), (self.n // 4, "i8"), (self.entries, "i4"), (0, "i8")]


def l2_elements() -> int:
    """Working set of the suite's L2-resident row: ADV_L2_MB (MiB; the sweep step sets it) or 24."""
    return int(float(os.environ.get("ADV_L2_MB", "24")) * 2**20) // 4 // 1024 * 1024


def suite():
    """(class, elements) of every adversary; the L2-resident size read from ADV_L2_MB now;
    ADV_ONLY (comma-separated kinds) keeps only those."""
    every = [(Adversary, 1 << 24), (PersistingWindow, 1 << 22), (CachedByPointer, 1 << 24),
             (FirstCallOnly, 1 << 24), (L2Resident, l2_elements()), (L2Aliased, 1 << 21), (SideStream, 1 << 24)]
    only = [k for k in os.environ.get("ADV_ONLY", "").split(",") if k]
    return [(c, n) for c, n in every if not only or c.kind in only]


SUITE = suite()
