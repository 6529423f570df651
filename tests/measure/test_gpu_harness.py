"""The harness on a real GPU (skipped without one). Correctness checks, not performance claims."""

import os

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

KERNELS = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "measure", "measure_kernels.cu")
FAST = dict(max_time_s=1.0, min_time_s=0.1)


def test_bench_kernel_verifies_and_times():
    from cudalens.measure.harness import bench_kernel

    n = 1 << 20
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    r = bench_kernel(KERNELS, "scale", (n + 255) // 256, 256, [x, y, np.float32(2.0), np.int32(n)],
                     verify={1: 2.0 * x}, rtol=1e-6, atol=0, **FAST)
    assert r.verification["ok"] and r.verification["arguments"]["1"]["mismatches"] == 0
    assert r.summary.n >= 10 and 0 < r.summary.median < 1e-2
    assert r.throughput["bytes_read"] == 4 * n and r.throughput["bytes_written"] == 4 * n
    assert r.device.l2_bytes > 0 and r.config["batch"] == 1
    bad = bench_kernel(KERNELS, "scale", (n + 255) // 256, 256, [x, y, np.float32(2.0), np.int32(n)],
                       verify={1: 3.0 * x}, **FAST)
    assert not bad.verification["ok"]


def test_event_floor_is_measured_and_subtracted():
    from cudalens.measure.harness import bench_kernel

    n = 1 << 20
    args = [np.ones(n, np.float32), np.zeros(n, np.float32), np.float32(2.0), np.int32(n)]
    r = bench_kernel(KERNELS, "scale", (n + 255) // 256, 256, args, **FAST)
    floor = r.config["event_floor_s"]
    assert 0 < floor < 20e-6 and r.config["timer"] == "events"
    kept = [s for s in r.samples if not s.throttled]
    assert all(s.seconds == pytest.approx(max(0.0, s.event_seconds - floor)) for s in kept)
    raw = bench_kernel(KERNELS, "scale", (n + 255) // 256, 256, args, timer="events-raw", **FAST)
    assert raw.config["event_floor_s"] == 0.0 and raw.config["timer"] == "events-raw"
    assert all(s.seconds == s.event_seconds for s in raw.samples)


def test_hot_mode_batches_launches():
    from cudalens.measure.harness import bench_kernel

    out = np.zeros(256 * 64, np.float32)
    r = bench_kernel(KERNELS, "compute_loop", 64, 256, [out, np.int32(10)], mode="hot", **FAST)
    assert r.config["batch"] > 1 and r.summary.median > 0


def test_bench_callable_with_torch_or_cupy():
    try:
        import torch

        a = torch.rand(1 << 22, device="cuda")
        fn = lambda: a.mul_(1.0)  # noqa: E731
    except Exception:  # noqa: BLE001
        cp = pytest.importorskip("cupy")
        a = cp.random.random(1 << 22, dtype=cp.float32)
        fn = lambda: cp.multiply(a, 1.0, out=a)  # noqa: E731
    from cudalens.measure.harness import bench

    r = bench(fn, bytes_read=a.nbytes if hasattr(a, "nbytes") else 0, **FAST)
    assert r.summary.median > 0 and r.summary.n >= 10


def test_faulting_and_hanging_kernels_are_isolated():
    from cudalens.measure.isolate import BenchTimeout, KernelFault, run_isolated

    src = open(KERNELS).read()
    base = {"source": src, "grid": [1, 1, 1], "block": [32, 1, 1], "mode": "cold",
            "policy": {"max_time_s": 1.0, "min_time_s": 0.1}}
    with pytest.raises(KernelFault, match="ILLEGAL|700|LAUNCH"):
        run_isolated(dict(base, kernel="fault", args=["float32[32]"]), timeout_s=60)
    with pytest.raises(BenchTimeout, match="timed out after 8 s"):
        run_isolated(dict(base, kernel="spin", args=["int32[1]:zeros"]), timeout_s=8)


TEMPLATED = r"""
namespace ns {
template <typename T, int S>
__global__ void scale(const T* __restrict__ x, T* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = S * x[i];
}
}
__device__ int lazy_calls;
extern "C" __global__ void lazy(const float* x, float* y, int n) {  // does the work on its first call only
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (lazy_calls == 0 && i < n) y[i] = 2.0f * x[i];
    __syncthreads();
    if (i == n - 1) atomicAdd(&lazy_calls, 1);
}
"""


def test_templated_kernel_by_name_with_a_trusted_certificate():
    from cudalens.measure.certificate import CERTIFICATE_KEYS
    from cudalens.measure.harness import bench_kernel

    n = 1 << 22
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    r = bench_kernel(TEMPLATED, "ns::scale<float, 3>", n // 256, 256, [x, np.zeros(n, np.float32), np.int32(n)],
                     verify={1: 3 * x}, **FAST)
    assert r.config["symbol"] == "_ZN2ns5scaleIfLi3EEEvPKT_PS1_i"
    assert set(CERTIFICATE_KEYS) <= set(r.certificate)
    assert r.certificate["verdict"] == "trusted", r.certificate["reasons"]
    assert r.certificate["checks"]["outputs_after"]["ok"] and r.certificate["flush"]["persisting_reset"]


def test_a_kernel_that_skips_work_after_its_first_call_is_suspect():
    from cudalens.measure.harness import bench_kernel

    n = 1 << 22
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    r = bench_kernel(TEMPLATED, "lazy", n // 256, 256, [x, np.zeros(n, np.float32), np.int32(n)],
                     roles=["in", "out", "scalar"], **FAST)
    assert r.certificate["verdict"] == "suspect"
    assert not r.certificate["checks"]["outputs_after"]["ok"]
    assert any("outputs differ" in why for why in r.certificate["reasons"])


def test_an_access_policy_window_set_by_the_work_is_reported_hot_and_removed_cold():
    """#17: a callable that sets a persisting-L2 window on the timed stream at its first call.
    Hot mode leaves it in place and says so (suspect); cold mode removes it before every sample and
    resets persisting lines (suspect, with the count). The window is set through cuda.bindings as a
    user would; the stream is ours so that nothing else sees it."""
    from cudalens.compiled.runtime_compile import compile_kernel
    from cudalens.hardware import cuda_driver as cu
    from cudalens.measure.harness import bench

    n = 1 << 22
    with cu.device_context(0) as ctx:
        drv = cu._driver()
        if cu.device_attribute(cu.cu_device(0), "MAX_PERSISTING_L2_CACHE_SIZE") <= 0:
            pytest.skip("this device has no persisting L2")
        with open(KERNELS) as fh:
            kernel = compile_kernel(fh.read(), "copy_f4", ctx.cc)
        src, dst, stream = cu.DeviceBuffer(4 * n), cu.DeviceBuffer(4 * n), cu.Stream()
        attr = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW

        def set_window(nbytes):
            v = drv.CUstreamAttrValue()
            v.accessPolicyWindow.base_ptr = src.ptr
            v.accessPolicyWindow.num_bytes = nbytes
            v.accessPolicyWindow.hitRatio = 1.0 if nbytes else 0.0
            v.accessPolicyWindow.hitProp = drv.CUaccessProperty.CU_ACCESS_PROPERTY_PERSISTING
            v.accessPolicyWindow.missProp = drv.CUaccessProperty.CU_ACCESS_PROPERTY_STREAMING
            cu.check(drv.cuStreamSetAttribute(stream.handle, attr, v), "cuStreamSetAttribute")

        state = {"set": False}

        def work():
            if not state["set"]:
                set_window(1 << 20)
                state["set"] = True
            cu.launch(kernel, 256, 256, [(src.ptr, "u8"), (dst.ptr, "u8"), (n // 4, "i8")], stream)

        try:
            hot = bench(work, stream=int(stream.handle), **FAST)
            set_window(0)  # hot mode left it in place; the work sets it again at its next first call
            state["set"] = False
            cold = bench(work, stream=int(stream.handle), mode="cold", **FAST)
            state["set"] = True  # the window is gone after cold mode: nothing set again
            clean = bench(work, stream=int(stream.handle), mode="cold", **FAST)
        finally:
            set_window(0)
            cu.check(drv.cuCtxResetPersistingL2Cache(), "cuCtxResetPersistingL2Cache")
            for release in (stream.close, src.close, dst.close, kernel.unload):
                release()
    h = hot.certificate["checks"]["persisting_l2"]
    assert h["checked"] and h["windows_found"] == 1 and h["windows"][0]["left_in_place"]
    assert h["windows"][0]["num_bytes"] == 1 << 20 and hot.certificate["verdict"] == "suspect"
    assert any("left an L2 access-policy window" in r for r in hot.certificate["reasons"])
    c = cold.certificate["checks"]["persisting_l2"]
    assert c["windows_found"] == 1 and cold.certificate["flush"]["persisting_reset"]
    assert any("set an L2 access-policy window" in r for r in cold.certificate["reasons"])
    assert clean.certificate["checks"]["persisting_l2"]["windows_found"] == 0
    assert clean.certificate["verdict"] == "trusted", clean.certificate["reasons"]
