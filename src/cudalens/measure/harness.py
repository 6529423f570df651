"""The benchmark harness on a real GPU: ``bench(fn)`` for any callable, ``bench_kernel(...)`` for CUDA C++.

How one sample is taken, and why the kernel is treated as an adversary: see
:mod:`cudalens.measure.engine`. What every result certifies: :mod:`cudalens.measure.certificate`.

- ``bench(fn)``: ``fn`` enqueues GPU work on ``stream`` (PyTorch, CuPy, Numba, Triton, cuda.core
  launches). With ``outputs=[...]`` (arrays with ``__cuda_array_interface__``) the outputs are
  poisoned before a run ahead of the timed samples and again after them, and the two runs must
  agree (or match ``reference``).
- ``bench_kernel(source, "ns::kernel<float, 128>", ...)``: compiles the kernel by its C++ name
  (:mod:`cudalens.measure.kernels`: NVRTC name expressions, else nvcc), uploads the arguments once
  per buffer set (``rotate`` sets defeat caching by pointer), checks the outputs before and after
  the timed samples, and times it.

Adversarial checks are on by default; each is a keyword: ``reset_persisting``, ``recheck``,
``speed_of_light``, ``detect_side_work`` (and ``rotate`` > 1 is opt-in). Timers and stopping
criteria are objects (:mod:`cudalens.measure.timers`, :mod:`cudalens.measure.sampling`).

Everything GPU-related is imported lazily; without a GPU, :class:`NoDeviceError` is raised.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from cudalens.errors import CudalensError, InputError
from cudalens.hardware.device import DeviceFacts
from cudalens.measure.argspec import ArgSpec, materialize
from cudalens.measure.certificate import build_certificate, compare_outputs, speed_of_light
from cudalens.measure.devargs import ArgSets, device_array, first_run_check, poison, read_array
from cudalens.measure.engine import (  # noqa: F401 - re-exported: the harness's public names
    L2Flush,
    _cu,
    _Nvml,
    _StreamRef,
    device_info,
    measure,
    stream_handle,
)
from cudalens.measure.result import BenchResult, code_hash
from cudalens.measure.sampling import SamplingPolicy
from cudalens.measure.stats import summarize
from cudalens.measure.throughput import Ceilings, assess_throughput
from cudalens.measure.timers import TIMERS, make_timer  # noqa: F401 - TIMERS re-exported


def _ceilings(info: DeviceFacts, extra: Ceilings | None) -> Ceilings:
    base = extra or Ceilings()
    return Ceilings(
        theoretical_bandwidth_gbs=base.theoretical_bandwidth_gbs or info.theoretical_bandwidth_gbs,
        measured_bandwidth_gbs=base.measured_bandwidth_gbs,
        theoretical_gflops=base.theoretical_gflops,
        measured_gflops=base.measured_gflops,
        l2_bytes=base.l2_bytes or info.l2_bytes or None,
        sources=dict(base.sources) or {"theoretical_bandwidth_gbs": "2 x memory clock x bus width / 8"},
    )


def _finish(kernel: str, mode: str, info: DeviceFacts, config: dict[str, Any], collected: Any,
            notes: list[str], bytes_rw: tuple[int, int], flops: float, ceilings: Ceilings | None,
            verification: dict[str, Any] | None, chash: str, *, engine: Mapping[str, Any],
            checks: Mapping[str, Any], toolchain: Mapping[str, Any] | None, sol_check: bool,
            rotate: int = 1) -> BenchResult:
    good = collected.kept_seconds
    untrusted = [s for s in collected.samples if s.untrusted and not s.throttled]
    if len(good) < 2 and len(untrusted) >= 2:
        good = [s.seconds for s in untrusted]  # every sample saw side work: report, do not hide
        notes = notes + ["every sample saw work elsewhere; the statistics use them all (suspect)"]
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
    sol = None
    if sol_check:
        bw = (ceilings.theoretical_bandwidth_gbs if ceilings and ceilings.theoretical_bandwidth_gbs
              else info.theoretical_bandwidth_gbs)
        sol = speed_of_light(summary.median, bytes_rw[0] + bytes_rw[1], bw, mode=mode, l2_bytes=info.l2_bytes)
    cert = build_certificate(mode=mode, engine=engine, samples=collected.samples, stop=collected.stop,
                             summary=summary, device=info, toolchain=toolchain,
                             outputs_before=checks.get("before"), outputs_after=checks.get("after"),
                             sol=sol, rotate=rotate)
    return BenchResult(kernel=kernel, mode=mode, device=info, config=config, samples=collected.samples,
                       stop_reason=collected.stop, summary=summary, throughput=thr,
                       verification=verification, code_hash=chash, notes=tuple(notes), certificate=cert)


def _check_timer(timer: Any) -> Any:
    """A timer name from ``TIMERS`` or a timer object (see measure/timers.py); InputError otherwise."""
    make_timer(timer)
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
    timer: Any = "events",
    criterion: Any = None,
    outputs: Sequence[Any] = (),
    reference: Sequence[Any] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-8,
    recheck: bool = True,
    reset_persisting: bool = True,
    speed_of_light: bool = True,
    detect_side_work: bool = True,
    device: int = 0,
    clock: Callable[[], float] = time.perf_counter,
    **policy_overrides: Any,
) -> BenchResult:
    """Time ``fn``, a callable that enqueues GPU work on ``stream`` (PyTorch, CuPy, Numba, Triton,
    cuda.core).

    ``stream``: the stream ``fn`` launches on (a torch/CuPy/cuda.core stream, a raw handle, or None
    for the legacy default stream that PyTorch and CuPy use unless told otherwise). ``mode``:
    ``"hot"`` (batches of calls between the events) or ``"cold"`` (L2 flushed before every call).
    ``outputs``: device arrays ``fn`` writes (poisoned and compared before and after the timed
    samples, against ``reference`` host arrays when given, else against the first run).
    ``bytes_read``/``bytes_written``: compulsory DRAM traffic, for throughput and the speed-of-light
    check. ``fn`` must not synchronize with the device; if it does, the harness notices and says so.
    Policy fields (``noise_target``, ``max_time_s``, ...) may be passed as keywords.
    """
    if mode not in ("hot", "cold"):
        raise InputError(f"mode must be 'hot' or 'cold', not {mode!r}")
    cu = _cu()
    pol = _policy(policy, policy_overrides)
    views = [device_array(o) for o in outputs]
    refs = None
    if reference is not None:
        if len(reference) != len(views):
            raise InputError(f"reference has {len(reference)} arrays for {len(views)} outputs")
        refs = {i: np.asarray(r) for i, r in enumerate(reference)}
    checks: dict[str, Any] = {}

    def checked_run() -> dict[int, np.ndarray]:
        for ptr, nbytes, _, _ in views:
            poison(cu, ptr, nbytes)
        fn()
        cu.check(cu._driver().cuCtxSynchronize(), "cuCtxSynchronize")
        return {i: read_array(cu, *v) for i, v in enumerate(views)}

    with cu.device_context(device) as ctx:
        info = device_info(device)
        first = None
        if views and recheck:
            first = checked_run()
            checks["before"] = first_run_check(first, refs, rtol, atol)
        collected, n, notes, rec = measure(
            ctx, info, fn, stream_h=stream_handle(stream), mode=mode, batch=batch, policy=pol, clock=clock,
            timer=_check_timer(timer), criterion=criterion, reset_persisting=reset_persisting,
            detect_side_work=detect_side_work)
        if first is not None:
            checks["after"] = compare_outputs(checked_run(), refs if refs is not None else first, rtol, atol,
                                              against="the reference" if refs is not None else "the first run's outputs")
    config = {"batch": n, "policy": pol.to_dict(), "stream": stream_handle(stream), "timer": _timer_used(collected),
              "event_floor_s": rec["event_floor_s"]}
    label = name or getattr(fn, "__name__", "callable")
    return _finish(label, mode, info, config, collected, notes, (bytes_read, bytes_written), flops,
                   ceilings, checks.get("before"), "", engine=rec, checks=checks, toolchain=None,
                   sol_check=speed_of_light)


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
    return compare_outputs(actual, expected, rtol, atol, against="the reference")


def _split_options(options: Sequence[str], defines: Mapping[str, Any] | None, build: Any) -> Any:
    from cudalens.measure.kernels import BuildContext  # noqa: PLC0415

    base = BuildContext.of(build)
    inc, dfs, flags, std = list(base.include_dirs), list(base.defines), list(base.flags), base.std
    for o in options:
        if o.startswith(("-std=", "--std=")):
            std = o.split("=", 1)[1]
        elif o.startswith("-I") and len(o) > 2:
            inc.append(o[2:])
        elif o.startswith("-D") and len(o) > 2:
            dfs.append(o[2:])
        elif o != "-O3":
            flags.append(o)
    dfs += [k if v is None else f"{k}={v}" for k, v in (defines or {}).items()]
    return BuildContext(tuple(inc), tuple(dfs), tuple(flags), std)


def _load(cu: Any, compiled: Any, name: str) -> Any:
    """Load the cubin into the current context; the kernel by its lowered symbol."""
    drv = cu._driver()
    image = np.frombuffer(compiled.cubin, dtype=np.uint8)
    module = cu.check(drv.cuModuleLoadData(image.ctypes.data), f"cuModuleLoadData({name})")
    sym = compiled.symbol(name)
    function = cu.check(drv.cuModuleGetFunction(module, sym.encode()), f"cuModuleGetFunction({name})")
    return cu.Kernel(name, module, function, compiled.compiler)


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
    build: Any = None,
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
    timer: Any = "events",
    criterion: Any = None,
    rotate: int = 1,
    recheck: bool = True,
    reset_persisting: bool = True,
    speed_of_light: bool = True,
    detect_side_work: bool = True,
    compiler: str = "auto",
    compiled: Any = None,
    device: int = 0,
    seed: int = 0,
    clock: Callable[[], float] = time.perf_counter,
    **policy_overrides: Any,
) -> BenchResult:
    """Compile ``kernel_name`` (any C++ name: ``saxpy``, ``ns::k<float, 128>``), run it on copies of
    ``args``, check it, time it.

    ``args``: numpy arrays (copied to the device; the kernel gets a pointer), numpy scalars (their
    type is the C type: ``np.int32`` -> ``int``), or :class:`ArgSpec` from the CLI grammar.
    ``build``: include directories, macros and flags (:class:`cudalens.measure.kernels.BuildContext`
    or any record with those fields); ``options``/``defines`` add to it.
    ``verify``: ``{arg index: expected array}`` or a callable taking the host inputs and returning
    one. Without it the outputs (roles out/inout) of a run after the timed samples are compared
    with those of a run before them; outputs are poisoned before both runs (``recheck``).
    ``roles`` ("in"/"out"/"inout" per argument) decide the byte counts when ``bytes_read`` /
    ``bytes_written`` are not given: by default arrays are read, and verified arrays written.
    ``rotate``: number of independent argument sets cycled through during timing.
    ``compiled``: a :class:`cudalens.measure.kernels.NamedCubin` already holding the kernel (from
    :func:`~cudalens.measure.kernels.compile_named`): no compilation here (sweeps, tuners).
    """
    if mode not in ("hot", "cold"):
        raise InputError(f"mode must be 'hot' or 'cold', not {mode!r}")
    if rotate < 1:
        raise InputError(f"rotate must be >= 1, got {rotate}")
    from cudalens.measure.kernels import compile_named  # noqa: PLC0415

    source, origin = _read_source(source_or_path)
    host, specs = _host_args(args, seed)
    expected = _expected(verify, host)
    role_of = _roles(host, specs, roles, expected)
    br = bytes_read if bytes_read is not None else sum(
        v.nbytes for v, r in zip(host, role_of) if isinstance(v, np.ndarray) and r in ("in", "inout"))
    bw = bytes_written if bytes_written is not None else sum(
        v.nbytes for v, r in zip(host, role_of) if isinstance(v, np.ndarray) and r in ("out", "inout"))
    ctx_build = _split_options(options, defines, build)
    g = (grid,) if isinstance(grid, int) else tuple(grid)
    b = (block,) if isinstance(block, int) else tuple(block)
    g3 = tuple(g) + (1,) * (3 - len(g))
    b3 = tuple(b) + (1,) * (3 - len(b))
    pol = _policy(policy, policy_overrides)
    out_idx = [i for i, r in enumerate(role_of) if r in ("out", "inout") and isinstance(host[i], np.ndarray)]
    checks: dict[str, Any] = {}
    cu = _cu()
    with cu.device_context(device) as ctx:
        info = device_info(device)
        if compiled is None:
            compiled = compile_named(source, kernel_name, ctx.cc, build=ctx_build, origin=origin, compiler=compiler)
        kern = _load(cu, compiled, kernel_name)
        sets = None
        stream = None
        try:
            sets = ArgSets(cu, host, rotate)
            stream = cu.Stream()
            turn = [0]

            def launch_set(k: int) -> None:
                cu.launch(kern, g3, b3, sets.packed[k], stream, shared_mem)

            def enqueue() -> None:
                launch_set(turn[0] % rotate)
                turn[0] += 1

            def checked_run() -> dict[int, np.ndarray]:
                sets.upload(0)
                for i in out_idx:
                    if role_of[i] == "out":
                        poison(cu, sets.ptr(0, i), host[i].nbytes)
                launch_set(0)
                stream.synchronize()
                return {i: read_array(cu, sets.ptr(0, i), host[i].nbytes, host[i].dtype, host[i].shape)
                        for i in (expected or out_idx)}

            first = None
            if expected is not None or (recheck and out_idx):
                first = checked_run()
                checks["before"] = first_run_check(first, expected, rtol, atol)
                for k in range(rotate):
                    sets.upload(k)
            collected, n, notes, rec = measure(
                ctx, info, enqueue, stream_h=int(stream.handle), mode=mode, batch=batch, policy=pol, clock=clock,
                timer=_check_timer(timer), criterion=criterion, reset_persisting=reset_persisting,
                detect_side_work=detect_side_work)
            if first is not None and recheck:
                checks["after"] = compare_outputs(
                    checked_run(), expected if expected is not None else first, rtol, atol,
                    against="the reference" if expected is not None else "the first run's outputs")
        finally:  # after a kernel fault the context is dead: cleanup errors must not hide the fault
            for res in (stream, sets):
                try:
                    if res is not None:
                        res.close()
                except Exception:  # noqa: BLE001
                    pass
            try:
                kern.unload()
            except Exception:  # noqa: BLE001
                pass
    config = {
        "grid": list(g3), "block": list(b3), "shared_mem_bytes": shared_mem, "batch": n,
        "args": [s.text if s is not None else _describe(v) for v, s in zip(host, specs)],
        "roles": role_of, "options": list(compiled.options), "source": origin, "policy": pol.to_dict(),
        "timer": _timer_used(collected), "event_floor_s": rec["event_floor_s"], "rotate": rotate,
        "symbol": compiled.symbol(kernel_name),
    }
    verification = checks.get("before") if expected is not None else None
    return _finish(kernel_name, mode, info, config, collected, notes, (br, bw), flops, ceilings,
                   verification, code_hash(source), engine=rec, checks=checks,
                   toolchain=compiled.certificate(), sol_check=speed_of_light, rotate=rotate)


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
