"""What measures one configuration: the GPU runner (the harness on a real GPU) and a fake one.

A runner is created once per GPU worker (``make()`` of a picklable :class:`RunnerSpec`, inside the
worker: a Ray actor, or the local process) and then measures :class:`MeasureItem` s one by one:

* the kernel is loaded from the cubin the CPU compile made (by its mangled name);
* it runs once on freshly initialized arguments, and the outputs (arrays of role ``out``/``inout``)
  are compared with the reference configuration's outputs (numpy.isclose, ``rtol``/``atol``) —
  the reference ran first on the same inputs in the same worker;
* it is timed by :func:`cudalens.measure.harness.bench` (cold by default: L2 flushed before every
  launch; event floor subtracted; throttled samples dropped; adaptive sample count), and the
  :class:`~cudalens.measure.result.BenchResult` carries the configuration, the launch and the check.

:class:`FakeRunner` makes BenchResults from a synthetic time model without a GPU, for tests of
everything around the measurement (resumption, Ray, strategies). It can sleep, log each
measurement to a file, and kill its own process at a chosen configuration once.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from cudalens.errors import CudalensError
from cudalens.hardware.device import DeviceFacts
from cudalens.measure.result import BenchResult
from cudalens.measure.sampling import Sample, SamplingPolicy
from cudalens.measure.stats import summarize
from cudalens.tune.space import Config


@dataclass(frozen=True)
class MeasureItem:
    config_key: str
    instance: str
    mangled: str
    cubin: bytes
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int = 0


@dataclass(frozen=True)
class Outcome:
    """``status``: measured | wrong | failed."""

    config_key: str
    status: str
    reason: str | None = None
    result: BenchResult | None = None
    worker: str = ""


@dataclass(frozen=True)
class RunnerSpec:
    """How to make a runner in a worker (picklable)."""

    kind: str  # "gpu" | "fake"
    args: tuple[str, ...] = ()
    mode: str = "cold"
    policy: dict[str, Any] = field(default_factory=dict)
    timer: str = "events"
    seed: int = 0
    rtol: float = 1e-4
    atol: float = 1e-5
    flops: float = 0.0
    fake: dict[str, Any] = field(default_factory=dict)

    def make(self, device: int = 0) -> Any:
        if self.kind == "fake":
            return FakeRunner(**self.fake)
        return GpuRunner(self, device)


# ---------------------------------------------------------------------------- fake

def fake_seconds(key: str, base: float = 1e-3) -> float:
    """A deterministic synthetic time with one clear optimum near BM=BN=128, TM=TN=8 (fake runner)."""
    cfg = Config.from_key(key).as_dict()
    t = base
    for name, v in cfg.items():
        target = {"BM": 128, "BN": 128, "BK": 16, "TM": 8, "TN": 8}.get(name, 64)
        t *= 1.0 + 0.15 * abs(math.log2(max(v, 1) / target))
    return t


class FakeRunner:
    """Synthetic measurements (no GPU). ``die_on``: a config key at which the process exits with
    code 137 the first ``die_times`` times, ``delay_s`` into the measurement, as a crash during it
    (``die_marker`` counts them, one line each); ``log``: a file that gets one line per measurement
    started; ``delay_s``: seconds each measurement takes."""

    def __init__(self, delay_s: float = 0.0, log: str | None = None, die_on: str | None = None,
                 die_marker: str | None = None, noise: float = 0.01, wrong: tuple[str, ...] = (),
                 fail: tuple[str, ...] = (), samples: int = 10, die_times: int = 1) -> None:
        self.delay_s, self.log, self.die_on, self.die_marker = delay_s, log, die_on, die_marker
        self.die_times = die_times
        self.noise, self.wrong, self.fail, self.samples = noise, set(wrong), set(fail), samples
        self.device = DeviceFacts(name="fake GPU", index=0, cc="9.0", sm_count=132, l2_bytes=50 * 2**20)

    def describe(self) -> dict[str, Any]:
        return {"name": self.device.name, "cc": self.device.cc, "sm_count": self.device.sm_count, "pid": os.getpid()}

    def set_reference(self, item: MeasureItem | None) -> None:
        pass

    def measure(self, item: MeasureItem) -> Outcome:
        if self.log:
            with open(self.log, "a") as fh:
                fh.write(f"{os.getpid()} {item.config_key}\n")
                fh.flush()
                os.fsync(fh.fileno())
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.die_on == item.config_key and self.die_marker:  # a crash during the measurement
            died = len(Path(self.die_marker).read_text().splitlines()) if os.path.exists(self.die_marker) else 0
            if died < self.die_times:
                with open(self.die_marker, "a") as fh:
                    fh.write(f"{os.getpid()}\n")
                os._exit(137)
        if item.config_key in self.fail:
            return Outcome(item.config_key, "failed", "launch: fake failure")
        t = fake_seconds(item.config_key)
        rng = np.random.default_rng(abs(hash(item.config_key)) % 2**32)
        secs = t * (1 + self.noise * rng.standard_normal(self.samples))
        samples = tuple(Sample(float(s), 1, 1980.0, False, float(s), "fake") for s in secs)
        ok = item.config_key not in self.wrong
        verification = {"ok": ok, "reference": "first configuration", "arguments": {}}
        result = BenchResult(kernel=item.instance, mode="cold", device=self.device,
                             config={"tune": item.config_key, "grid": list(item.grid), "block": list(item.block)},
                             samples=samples, stop_reason="converged", summary=summarize([s.seconds for s in samples]),
                             verification=verification)
        if not ok:
            return Outcome(item.config_key, "wrong", "output differs from the reference configuration's", result)
        return Outcome(item.config_key, "measured", None, result)

    def close(self) -> None:
        pass


# ---------------------------------------------------------------------------- GPU

class GpuRunner:
    """Measures configurations on GPU ``device`` through the harness (see the module docstring)."""

    def __init__(self, spec: RunnerSpec, device: int = 0) -> None:
        from cudalens.hardware import cuda_driver as cu
        from cudalens.measure.argspec import materialize, parse_args
        from cudalens.measure.harness import device_info

        self.cu, self.spec, self.index = cu, spec, device
        self._ctx_cm = cu.device_context(device)
        self.ctx = self._ctx_cm.__enter__()
        self.info = device_info(device)
        self.args = parse_args(list(spec.args)) if spec.args else []
        rng = np.random.default_rng(spec.seed)
        self.host = [materialize(a, rng) for a in self.args]
        self.outputs = [i for i, a in enumerate(self.args) if a.kind == "array" and a.role in ("out", "inout")]
        self.buffers = []
        self.packed: list[tuple[Any, str]] = []
        for v in self.host:
            if isinstance(v, np.ndarray):
                buf = cu.DeviceBuffer(max(v.nbytes, 1))
                self.buffers.append(buf)
                self.packed.append((buf.ptr, "u8"))
            else:
                self.packed.append((v, v.dtype.str))
        self.stream = cu.Stream()
        self.reference: dict[int, np.ndarray] | None = None
        self.reference_key: str | None = None
        self.bytes_read = sum(v.nbytes for v, a in zip(self.host, self.args)
                              if isinstance(v, np.ndarray) and a.role in ("in", "inout"))
        self.bytes_written = sum(v.nbytes for v, a in zip(self.host, self.args)
                                 if isinstance(v, np.ndarray) and a.role in ("out", "inout"))

    def describe(self) -> dict[str, Any]:
        return {"name": self.info.name, "cc": self.info.cc, "sm_count": self.info.sm_count, "index": self.index,
                "pid": os.getpid(), "visible": os.environ.get("CUDA_VISIBLE_DEVICES", "")}

    def _upload(self) -> None:
        drv = self.cu._driver()
        for v, (ptr, _) in zip(self.host, self.packed):
            if isinstance(v, np.ndarray) and v.nbytes:
                self.cu.check(drv.cuMemcpyHtoD(ptr, v.ctypes.data, v.nbytes), "cuMemcpyHtoD")

    def _download(self) -> dict[int, np.ndarray]:
        drv = self.cu._driver()
        out = {}
        for i in self.outputs:
            arr = np.empty_like(self.host[i])
            self.cu.check(drv.cuMemcpyDtoH(arr.ctypes.data, self.packed[i][0], arr.nbytes), "cuMemcpyDtoH")
            out[i] = arr
        return out

    def _load(self, item: MeasureItem) -> Any:
        cu, drv = self.cu, self.cu._driver()
        image = np.frombuffer(item.cubin, dtype=np.uint8)
        module = cu.check(drv.cuModuleLoadData(image.ctypes.data), f"cuModuleLoadData({item.instance})")
        function = cu.check(drv.cuModuleGetFunction(module, item.mangled.encode()), f"cuModuleGetFunction({item.mangled})")
        if item.shared_bytes > 48 * 1024:
            attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            cu.check(drv.cuFuncSetAttribute(function, attr, item.shared_bytes), "cuFuncSetAttribute")
        return cu.Kernel(item.instance, module, function, "nvcc")

    def _run_once(self, kern: Any, item: MeasureItem) -> dict[int, np.ndarray]:
        self._upload()
        self.cu.launch(kern, item.grid, item.block, self.packed, self.stream, item.shared_bytes)
        self.stream.synchronize()
        return self._download()

    def set_reference(self, item: MeasureItem | None) -> None:
        if item is None or not self.outputs:
            return
        kern = self._load(item)
        try:
            self.reference = self._run_once(kern, item)
            self.reference_key = item.config_key
        finally:
            kern.unload()

    def measure(self, item: MeasureItem) -> Outcome:
        from cudalens.measure.harness import bench, check_outputs

        try:
            kern = self._load(item)
        except CudalensError as exc:
            return Outcome(item.config_key, "failed", f"load: {exc}")
        try:
            try:
                outputs = self._run_once(kern, item)
            except CudalensError as exc:
                return Outcome(item.config_key, "failed", f"launch: {exc}")
            verification = None
            if self.reference is not None:
                verification = check_outputs(outputs, self.reference, self.spec.rtol, self.spec.atol)
                verification["reference"] = f"configuration {self.reference_key}"
            self._upload()
            kernel, packed, stream, shared = kern, self.packed, self.stream, item.shared_bytes
            launch = self.cu.launch

            def enqueue() -> None:
                launch(kernel, item.grid, item.block, packed, stream, shared)

            result = bench(enqueue, stream=int(stream.handle), mode=self.spec.mode, name=item.instance,
                           bytes_read=self.bytes_read, bytes_written=self.bytes_written, flops=self.spec.flops,
                           policy=SamplingPolicy(**self.spec.policy), timer=self.spec.timer, device=self.index)
        except CudalensError as exc:
            return Outcome(item.config_key, "failed", f"measure: {exc}")
        finally:
            try:
                kern.unload()
            except Exception:  # noqa: BLE001, S110 - a dead context after a fault
                pass
        config = {**result.config, "tune": item.config_key, "grid": list(item.grid), "block": list(item.block),
                  "shared_mem_bytes": item.shared_bytes, "mangled": item.mangled, "args": list(self.spec.args)}
        result = replace(result, config=config, verification=verification)
        if verification is not None and not verification["ok"]:
            return Outcome(item.config_key, "wrong", "output differs from the reference configuration's", result)
        return Outcome(item.config_key, "measured", None, result)

    def close(self) -> None:
        for res in [self.stream, *self.buffers]:
            try:
                res.close()
            except Exception:  # noqa: BLE001, S110 - a dead context after a fault
                pass
        self._ctx_cm.__exit__(None, None, None)


def policy_dict(overrides: Mapping[str, Any]) -> dict[str, Any]:
    base = SamplingPolicy().to_dict()
    base.update({k: v for k, v in overrides.items() if v is not None})
    SamplingPolicy(**base)  # validates
    return base


def fake_build(job: Any) -> Any:
    """Compiled facts without a compiler, for tests: shared memory (BM+BN)*BK*4 B (over 48 KiB does
    not compile, as ptxas refuses it), 24 + 2*TM*TN registers (over 255 spills), SASS counts of
    a register-blocked inner loop."""
    from cudalens.tune.build import BuildFacts

    env = dict(job.env)
    bm, bn, bk, tm, tn = (env.get(k, 1) for k in ("BM", "BN", "BK", "TM", "TN"))
    smem = (bm + bn) * bk * 4
    inst = job.kernel.instance(env)
    if smem > 48 * 1024:
        return BuildFacts(job.config_key, False, f"does not compile: ptxas error: Entry function uses too much shared "
                          f"data ({smem:#x} bytes, 0xc000 max)", instance=inst)
    regs = 24 + 2 * tm * tn
    spill = max(0, regs - 255) * 4
    threads = max(1, (bm // max(tm, 1)) * (bn // max(tn, 1)))
    res = {"registers": min(regs, 255), "static_shared_bytes": smem, "local_bytes": spill, "spill_stores": spill,
           "spill_loads": spill, "constant_bytes": 0, "barriers": 1}
    counts = {"fp32": bk * tm * tn, "lds.128": max(1, bk * (tm + tn) // 4), "ldg.32": max(1, (bm + bn) * bk // threads),
              "sts": max(1, (bm + bn) * bk // threads), "bar": 2, "branch": 3}
    return BuildFacts(job.config_key, True, None, f"_Z4fake_{job.config_key}", inst, res, counts, "")


def fake_builder(jobs: Any, workers: int | None = None) -> dict[str, Any]:
    return {j.config_key: fake_build(j) for j in jobs}
