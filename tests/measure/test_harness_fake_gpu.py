"""bench_kernel end to end on a simulated GPU: real compilation by name (NVRTC), fake driver memory
(device pointers are host addresses of a numpy arena), kernels written in Python, fake timing.
Checks the adversarial logic of the harness: poisoned re-check, rotation, speed of light, certificate."""

import ctypes
import types
from contextlib import contextmanager

import numpy as np
import pytest

from cudalens.errors import ToolchainError
from cudalens.hardware.device import DeviceFacts
from cudalens.measure import harness
from cudalens.measure.certificate import CERTIFICATE_KEYS
from cudalens.measure.sampling import Collected, Sample

SRC = r"""
namespace demo {
template <typename T> __global__ void twice(const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2 * x[i];
}
}
"""
N = 4096
DEV = DeviceFacts(name="Simulated", cc="9.0", l2_bytes=50 << 20, theoretical_bandwidth_gbs=3352.3)


class FakeCu:
    """The part of cuda_util the harness uses, over a numpy arena."""

    class CudaCallError(Exception):
        pass

    def __init__(self, behaviour):
        self.arena = np.zeros(64 << 20, np.uint8)
        self.base, self.top = self.arena.ctypes.data, 0
        self.behaviour, self.outputs_seen, self.calls = behaviour, [], 0
        cu = self

        class DeviceBuffer:
            def __init__(self, nbytes):
                self.ptr = cu.base + cu.top
                cu.top += (nbytes + 255) // 256 * 256

            def close(self):
                pass

        class Stream:
            handle = 1

            def synchronize(self):
                pass

            def close(self):
                pass

        self.DeviceBuffer, self.Stream = DeviceBuffer, Stream
        self.Kernel = lambda name, module, function, compiler: types.SimpleNamespace(name=name, unload=lambda: None)
        self.drv = types.SimpleNamespace(
            cuModuleLoadData=lambda ptr: "module", cuModuleGetFunction=lambda m, sym: sym,
            cuMemcpyHtoD=lambda dst, src, n: ctypes.memmove(dst, src, n),
            cuMemcpyDtoH=lambda dst, src, n: ctypes.memmove(dst, src, n),
            cuMemsetD8=lambda ptr, value, n: ctypes.memset(ptr, value, n))

    def check(self, result, call=""):
        return result

    def _driver(self):
        return self.drv

    @contextmanager
    def device_context(self, index):
        yield types.SimpleNamespace(cc=(9, 0))

    def view(self, ptr, n):
        off = ptr - self.base
        return self.arena[off:off + 4 * n].view(np.float32)

    def launch(self, kernel, grid, block, args, stream, shared=0):
        x, y, n = self.view(args[0][0], N), self.view(args[1][0], N), int(args[2][0])
        self.behaviour(self, x, y, n, args[1][0])
        self.outputs_seen.append(args[1][0])
        self.calls += 1


def honest(cu, x, y, n, out_ptr):
    y[:n] = 2 * x[:n]


def lazy_by_pointer(cu, x, y, n, out_ptr):  # skips the work when it saw this output pointer before
    if out_ptr not in cu.outputs_seen:
        y[:n] = 2 * x[:n]


def fake_measure(seconds):
    def measure(ctx, info, enqueue, **kw):
        for _ in range(12):
            enqueue()
        samples = tuple(Sample(seconds * (1 + 0.001 * i), 1, 1980.0) for i in range(12))
        record = {"event_floor_s": 1.2e-6, "timer": {"name": "events"}, "flush_bytes": 100 << 20,
                  "persisting_reset": kw.get("mode") == "cold", "windows_seen": [], "windows_seen_count": 0,
                  "side_work_checked": True, "side_work": {"found": False}, "clocks": [], "criterion": {}}
        return Collected(samples, "converged", 0.5), 1, [], record
    return measure


@pytest.fixture
def run(monkeypatch):
    def go(behaviour, seconds=20e-6, **kw):
        cu = FakeCu(behaviour)
        monkeypatch.setattr(harness, "_cu", lambda: cu)
        monkeypatch.setattr(harness, "device_info", lambda index=0: DEV)
        monkeypatch.setattr(harness, "measure", fake_measure(seconds))
        x = np.random.default_rng(0).random(N, dtype=np.float32)
        try:
            r = harness.bench_kernel(SRC, "demo::twice<float>", N // 256, 256, [x, np.zeros(N, np.float32), np.int32(N)],
                                     roles=["in", "out", "scalar"], compiler="nvrtc", **kw)
        except ToolchainError as exc:  # pragma: no cover - CI installs the nvrtc wheel
            pytest.skip(f"NVRTC not usable here: {exc}")
        return r, cu
    return go


def test_an_honest_kernel_is_trusted_with_a_full_certificate(run):
    r, cu = run(honest)
    c = r.certificate
    assert set(CERTIFICATE_KEYS) <= set(c) and c["verdict"] == "trusted", c["reasons"]
    assert c["checks"]["outputs_before"]["ok"] and c["checks"]["outputs_after"]["ok"]
    assert c["checks"]["outputs_after"]["against"] == "the first run's outputs"
    assert c["toolchain"]["symbols"] == {"demo::twice<float>": "_ZN4demo5twiceIfEEvPKT_PS1_i"}
    assert r.config["symbol"] == "_ZN4demo5twiceIfEEvPKT_PS1_i" and cu.calls == 1 + 12 + 1


def test_a_kernel_that_skips_work_for_a_known_pointer_is_caught_after_timing(run):
    r, _ = run(lazy_by_pointer)
    c = r.certificate
    assert c["verdict"] == "suspect"
    assert c["checks"]["outputs_before"]["ok"]  # right on the first call
    after = c["checks"]["outputs_after"]
    assert not after["ok"] and after["arguments"]["1"]["mismatches"] == N  # still poisoned: NaN
    assert any("outputs differ from the first run's outputs" in why for why in c["reasons"])
    # the same kernel with the re-check switched off looks fine
    quiet, _ = run(lazy_by_pointer, recheck=False)
    assert quiet.certificate["verdict"] == "trusted" and not quiet.certificate["checks"]["outputs_after"]["checked"]


def test_rotating_buffers_give_the_kernel_a_new_output_pointer_each_call(run):
    r, cu = run(honest, rotate=3)
    timed = cu.outputs_seen[1:-1]
    assert len(set(timed)) == 3 and timed[0] != timed[1] != timed[2]
    assert r.config["rotate"] == 3 and r.certificate["regime"]["rotating_buffers"] == 3


def test_a_median_below_the_dram_floor_is_suspect(run):
    r, _ = run(honest, seconds=1e-9)  # 32 KB in 1 ns: impossible at 3352 GB/s
    sol = r.certificate["checks"]["speed_of_light"]
    assert not sol["ok"] and sol["bytes"] == 8 * N and r.certificate["verdict"] == "suspect"
    ok, _ = run(honest, seconds=1e-9, speed_of_light=False)
    assert ok.certificate["verdict"] == "trusted"


def test_verify_compares_with_the_reference_before_and_after(run):
    x = np.random.default_rng(0).random(N, dtype=np.float32)
    r, _ = run(honest, verify={1: 3 * x})
    assert not r.verification["ok"] and r.certificate["checks"]["outputs_after"]["against"] == "the reference"
