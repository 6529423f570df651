"""The adversarial suite: callables that try to look faster than they are (our own kernels).

Each adversary has ``run(stream_handle)`` (enqueue one call on that stream), ``outputs`` (device
arrays with __cuda_array_interface__), ``bytes_moved`` (compulsory DRAM traffic) and ``reset()``.
Used by bench_suite_gpu.py (cudalens, triton.testing.do_bench) and _adv_cuda_bench.py (cuda-bench).
"""

from __future__ import annotations

import os

import numpy as np

from cudalens.measure import cuda_util as cu
from cudalens.measure.kernels import compile_named

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["adv_copy", "adv_cached", "adv_first_only", "adv_mark", "adv_reset", "adv_token", "adv_sum"]
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

    def launch(self, name, grid, args, stream_h):
        cu.launch(self.k[name], grid, BLOCK, args, _S(stream_h))


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
    what = "reads 16 MB (per-block sums): between calls its data stays in the 50 MB L2 unless flushed"
    kernel = "adv_sum"

    def __init__(self, mod, n, device_info=None):
        super().__init__(mod, n)
        self.outputs = [DevArray(self.dst.ptr, self.grid)]
        self.bytes_written = 4 * self.grid


SUITE = [  # (class, elements)
    (Adversary, 1 << 24),
    (PersistingWindow, 1 << 22),
    (CachedByPointer, 1 << 24),
    (FirstCallOnly, 1 << 24),
    (SideStream, 1 << 24),
    (L2Resident, 1 << 22),
]
