"""``occupancy``, ``bench``, ``profile`` and ``tune``: the calculator, and the functions that need a
GPU (each raises :class:`cudalens.errors.NoDeviceError`, one clear line, without one; ``tune``
takes a fake runner and ``profile`` a saved trace, which need none)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import IO, Any

from cudalens.api.analysis import Report
from cudalens.api.results import Bench, Occupancy, Tune
from cudalens.errors import InputError


def occupancy(threads: int | str, registers: int | str, *, cc: str | None = None, shared_mem: int | str = 0,
              static_shared_mem: int | str = 0, carveout: int | str | None = None, cache_config: str = "none",
              barriers: int | str = 1, sms: int | str | None = None) -> Occupancy:
    """Occupancy of a launch of ``threads`` per block at ``registers`` per thread: blocks and warps
    per SM, the limiter(s), the what-if and the block size of the best occupancy. ``cc``: as every
    command resolves it (default: the GPU's, else 9.0)."""
    from cudalens.hardware.target import resolve_cc
    from cudalens.occupancy import device_for, what_if
    from cudalens.occupancy.blocksize import max_potential_block_size
    from cudalens.occupancy.calculator import as_count

    dev = device_for(resolve_cc(None if cc is None else str(cc)))
    check_limits(dev, threads, registers, shared_mem, static_shared_mem)
    common: dict[str, Any] = dict(static_shared_mem=static_shared_mem, carveout=carveout, cache_config=cache_config,
                                  block_barriers=barriers)
    launch: tuple[Any, ...] = (threads, registers, shared_mem)  # counts as given (int or text), checked there
    w = what_if(dev, *launch, **common)
    r = w.current
    num_sms = as_count("SM count", sms, minimum=1) if sms is not None else None
    best = max_potential_block_size(dev, r.registers_per_thread, r.shared_mem_per_block, num_sms=num_sms, **common)
    return Occupancy(dev.cc, dev.source, r, w, best.block_size, best.min_grid_size,
                     "blocks" if num_sms else "blocks per SM")


def check_limits(dev: Any, threads: Any, registers: Any, shared_mem: Any, static_shared_mem: Any) -> None:
    """Reject, before any computation, a launch no GPU of ``dev``'s compute capability accepts,
    naming the limit (the what-if tables would otherwise be built around an impossible block)."""
    from cudalens.occupancy.calculator import as_count

    checks = (
        ("--threads", as_count("--threads", threads, minimum=1), dev.max_threads_per_block, "threads per block"),
        ("--registers", as_count("--registers", registers, minimum=0), dev.max_regs_per_thread,
         "registers per thread"),
        ("--shared-mem", as_count("--shared-mem", shared_mem), dev.smem_per_block_optin,
         "bytes of dynamic shared memory per block (the opt-in maximum)"),
        ("--static-shared-mem", as_count("--static-shared-mem", static_shared_mem), dev.smem_per_block,
         "bytes of static shared memory per block"),
    )
    for option, value, limit, what in checks:
        if value > limit:
            raise InputError(f"{option} {value}: more than the {limit} {what} of CC {dev.cc}")


def launch_request(source: str, *, kernel: str, grid: Any, block: Any, args: Sequence[str] = (),
                   values: Mapping[str, Any] | None = None, shared_mem: int = 0, defines: Mapping[str, Any] | None = None, cold: bool = True,
                   batch: int | None = None, timer: str = "events", bytes_read: int | None = None,
                   bytes_written: int | None = None, flops: float = 0.0, noise: str | float = "0.5%",
                   min_samples: int = 10, min_time: float = 0.5, max_time: float = 10.0, device: int = 0,
                   rotate: int = 1, recheck: bool = True, reset_persisting: bool = True, speed_of_light: bool = True,
                   detect_side_work: bool = True, options: Sequence[str] = ()) -> dict[str, Any]:
    """The measurement request of one launch (``cudalens bench``'s grammar: a C++ kernel name,
    ``--arg`` specs with their ``{NAME}`` placeholders from ``values`` (a sweep's cell), dims as
    ``G``/``G,G``/``G,G,G``), every part checked (InputError naming it)."""
    from cudalens.measure.argspec import parse_args, parse_dims
    from cudalens.measure.kernels import parse_kernel_names
    from cudalens.measure.sampling import SamplingPolicy
    from cudalens.measure.stats import parse_percent

    if not os.path.isfile(source):
        raise InputError(f"{source}: no such CUDA source file")
    with open(source, "rb") as fh:  # bytes as the compiler reads them; non-UTF-8 bytes survive the round trip
        text = fh.read().decode("utf-8", "surrogateescape")
    if rotate < 1:
        raise InputError(f"--rotate {rotate}: must be at least 1")
    try:
        policy = SamplingPolicy(noise_target=parse_percent(noise) if isinstance(noise, str) else float(noise),
                                min_samples=min_samples, min_time_s=min_time, max_time_s=max_time,
                                max_samples=max(10_000, min_samples))
    except ValueError as exc:
        raise InputError(str(exc)) from None
    parse_kernel_names(kernel)
    specs = parse_args(list(args), values)  # InputError names the bad --arg
    dims = [d if isinstance(d, tuple) and len(d) == 3 else parse_dims(d if isinstance(d, str) else
                                                                      ",".join(map(str, _seq(d))), what)
            for d, what in ((grid, "grid"), (block, "block"))]
    return {
        "source": text, "origin": source, "kernel": kernel, "grid": list(dims[0]), "block": list(dims[1]),
        "shared_mem": shared_mem, "args": [s.text for s in specs], "mode": "cold" if cold else "hot",
        "batch": batch, "defines": dict(defines or {}), "bytes_read": bytes_read, "bytes_written": bytes_written,
        "flops": flops, "policy": policy.to_dict(), "device": device, "timer": timer, "rotate": rotate,
        "options": list(options),
        "switches": {"recheck": recheck, "reset_persisting": reset_persisting, "speed_of_light": speed_of_light,
                     "detect_side_work": detect_side_work},
    }


def _seq(value: Any) -> Sequence[Any]:
    return value if isinstance(value, (list, tuple)) else (value,)


def bench(source: str, kernel: str, *, grid: Any, block: Any, args: Sequence[str] = (), timeout: float = 120.0,
          include_dirs: Sequence[str] = (), nvcc_flags: Sequence[str] = (), compile_commands: str | None = None,
          use_config: bool = True, save: bool = False, db: str | None = None, **launch: Any) -> Bench:
    """Time ``kernel`` (any C++ name: ``'ns::reduce<float, 256>'``) of the CUDA file ``source`` in
    an isolated child process, as ``cudalens bench`` does. ``args``: one ``--arg`` spec per kernel
    parameter (``"float32[2^20]:rand"``, ``"int32=1048576"``); ``launch``: the other options of
    :func:`launch_request` (``shared_mem``, ``defines``, ``cold``, ``noise``...). Needs a GPU:
    without one, NoDeviceError says so. For a Python callable (PyTorch, CuPy, Triton) use
    :func:`cudalens.measure.bench`."""
    from cudalens.measure.isolate import run_isolated
    from cudalens.measure.result import BenchResult
    from cudalens.project import build_context

    build = build_context([source], include_dirs=list(include_dirs), nvcc_flags=list(nvcc_flags),
                          compile_commands=compile_commands, use_config=use_config)
    request = launch_request(source, kernel=kernel, grid=grid, block=block, args=args,
                             options=build.nvcc_flags(source), **launch)
    result = BenchResult.from_dict(run_isolated(request, timeout_s=timeout))
    run_id = None
    if save:
        from cudalens.measure.history import save as save_run

        run_id = save_run(result, db)
    return Bench(result, run_id)


def profile(command: Sequence[str] = (), *, trace: str | None = None, sources: Sequence[str] = (),
            defines: Mapping[str, Any] | Sequence[str] | None = None, cc: str | None = None, duration: float | None = None,
            launch_limit: int = 0, counters: bool = False, top: int = 5, counters_top: int = 3,
            keep_trace: str | None = None, include_dirs: Sequence[str] = (), nvcc_flags: Sequence[str] = (),
            compile_commands: str | None = None, use_config: bool = True, trust_flags: bool = False,
            stdout: IO[str] | None = None) -> Report:
    """Trace ``command`` (a CUDA program, or ``["python", "script.py"]``) and rank what to change
    first in its top kernels; or report on a ``trace`` saved earlier (``keep_trace=``), which
    needs no GPU. ``sources``: the program's CUDA files, for the static models. ``cc``: as every
    command resolves it (the option, ``[tool.cudalens] cc``, the GPU's, else 9.0). ``stdout``: where
    the program's own output goes (default: this process's). The :class:`Report` holds the
    ``cudalens/profile-1`` document (``to_dict()``) and the source lines its findings point at."""
    from cudalens.pipeline.report import with_sources
    from cudalens.trace.app import Options, profile_application, report_from_trace

    if top < 1 or counters_top < 0:
        raise InputError(f"--top {top}: must be at least 1")
    if not command and trace is None:
        raise InputError("no command given: profile(['./app', 'args']) or profile(trace='run.trace')")
    macros: Mapping[str, Any] = defines if isinstance(defines, Mapping) else {}
    if defines and not isinstance(defines, Mapping):  # ["N=4096"]; the access model only when asked
        from cudalens.access.model import parse_defines

        try:
            macros = parse_defines(list(defines))
        except ValueError as exc:
            raise InputError(str(exc)) from None
    pairs = tuple((str(k), str(v)) for k, v in macros.items())
    if cc is None and use_config:  # the configuration of the sources, else of the working folder
        from cudalens.project.config import load_config

        cc = load_config(list(sources) or ["."]).cc()
    build = None
    if sources or include_dirs or nvcc_flags or compile_commands:
        from cudalens.project import build_context

        build = build_context(list(sources), include_dirs=list(include_dirs), nvcc_flags=list(nvcc_flags),
                              compile_commands=compile_commands, use_config=use_config, trust_flags=trust_flags)
    opts = Options(defines=pairs, build=build, duration=duration, launch_limit=launch_limit, counters=counters,
                   top=top, counters_top=counters_top, sources=tuple(sources), cc=cc, keep_trace=keep_trace)
    if trace is not None:
        from cudalens.trace.records import parse_file

        data = report_from_trace(parse_file(trace), list(command) or [trace], opts)
    else:
        data = profile_application(list(command), opts, stdout=stdout)
    return with_sources(Report("profile", profile=data))


def tune(source: str, kernel: str, space: Mapping[str, Sequence[int]] | Sequence[str], *, grid: Sequence[str] | str,
         block: Sequence[str] | str, args: Sequence[str] = (), shared_mem: str | int = "0",
         restrict: Sequence[str] = (), const: Mapping[str, int] | Sequence[str] = (), nvcc_flags: Sequence[str] = (),
         cc: str | None = None, fake: Mapping[str, Any] | None = None, **options: Any) -> Tune:
    """Tune ``kernel`` (``'gemm<BM,BN,BK>'``) of ``source`` over ``space`` (``{"BM": [32, 64]}`` or
    ``["BM=32,64", "BK=8:32:x2"]``, the range grammar of ``--axis``): every configuration is
    compiled, the models prune what cannot launch, spills or starves the SM, the harness measures
    the rest. ``grid``/``block``: expressions over the parameters (``"cdiv(N, BN), M/BM"``; bench's
    ``{BN}`` placeholders are read as the names). ``args``: bench's ``--arg`` specs, through the
    same parser, ``{NAME}`` standing for a ``const`` (``float32[{N}*{N}]``); every configuration
    gets the same arguments, so a tuned parameter cannot size one.
    ``fake``: FakeRunner options (no GPU, no compiler: ``{}`` for the defaults), for trying it out
    and for tests. ``options``: the rest of :func:`cudalens.tune.tune` (strategy, db, ...)."""
    from cudalens.compiled.names import split_top_level
    from cudalens.measure.argspec import parse_args
    from cudalens.measure.axes import placeholders, unbrace
    from cudalens.tune import make_space
    from cudalens.tune import tune as run_tune

    def exprs(value: Sequence[str] | str, what: str) -> list[str]:
        parts = [p.strip() for p in split_top_level(value, "()")] if isinstance(value, str) else [str(v) for v in value]
        if any(not p for p in parts):
            raise InputError(f"--{what} {value!r}: an empty expression")
        return parts

    sp = make_space(space, list(restrict), const)
    # bench's placeholders ({BM}, as in --axis sweeps) name the same parameters here: one launch grammar
    kernel, shared_mem = unbrace(kernel), unbrace(str(shared_mem))
    grid = unbrace(grid) if isinstance(grid, str) else [unbrace(str(g)) for g in grid]
    block = unbrace(block) if isinstance(block, str) else [unbrace(str(b)) for b in block]
    tuned = {p.name for p in sp.params}
    for a in args:
        name = next((n for n in placeholders(a) if n in tuned), None)
        if name is not None:
            raise InputError(f"--arg {a!r}: {{{name}}} is a tuned parameter, and every configuration gets the same "
                             f"arguments: size it with --const (e.g. --const N=4096 and {{N}})")
    args = [s.text for s in parse_args(list(args), dict(sp.constants), "a --const (constants")]
    if cc is None:  # the option, else the configuration's, else the GPU's (what the runner describes)
        from cudalens.project.config import load_config

        cc = load_config([source]).cc()
    if fake is not None:
        from cudalens.tune.runners import RunnerSpec, fake_build, fake_builder

        options.update(runner=RunnerSpec("fake", tuple(args), fake=dict(fake)), builder=fake_builder,
                       build_fn=fake_build)
    report = run_tune(source, kernel, sp, grid=exprs(grid, "grid"), block=exprs(block, "block"), args=list(args),
                      shared=str(shared_mem), cc=cc, flags=list(nvcc_flags), **options)
    return Tune(report)
