"""``tune(...)``: the whole sweep in one call (what ``cudalens tune`` runs)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cudalens.errors import InputError
from cudalens.tune.build import KernelSpec, build_one, check_flags
from cudalens.tune.engine import (
    Progress,
    TuneSpec,
    check_expressions,
    prepare,
    run_local,
)
from cudalens.tune.report import summarize_session
from cudalens.tune.runners import RunnerSpec, policy_dict
from cudalens.tune.space import Space


def tune(source: str, kernel: str, space: Space, *, grid: Sequence[str], block: Sequence[str], args: Sequence[str] = (),
         shared: str = "0", strategy: str = "guided", db: str | None = None, cc: str | None = None,
         flags: Sequence[str] = (), mode: str = "cold", policy: dict[str, Any] | None = None, timer: str = "events",
         max_fraction: float = 0.5, patience: int | None = None, min_gain: float = 0.01, seed: int = 0,
         keep_spills: bool = False, min_occupancy: float | None = None, reference: str | None = None,
         rtol: float = 1e-4, atol: float = 1e-5, flops: float = 0.0, ray: str | None = None,
         num_workers: int | None = None, compile_workers: int | None = None, cache_dir: str | None = None,
         runner: RunnerSpec | None = None, builder: Callable[..., Any] | None = None,
         build_fn: Callable[..., Any] | None = None, stream: bool | None = None,
         on_outcome: Callable[[Any], None] | None = None, on_event: Callable[[str], None] | None = None,
         top: int = 5) -> dict[str, Any]:
    """Compile, prune, search and measure; returns the session summary (see report.py).

    ``stream`` (default: on for the exhaustive strategy): measure while the rest still compiles,
    in the order the compiles finish. ``builder`` (all jobs at once) and ``build_fn`` (one job,
    picklable) replace the nvcc compile, for tests."""
    t0 = time.perf_counter()
    if not Path(source).is_file():
        raise InputError(f"{source}: no such file")
    check_expressions(TuneSpec(source, kernel, space, tuple(grid), tuple(block), shared))
    KernelSpec.parse(kernel)
    check_flags(source, flags)  # a --nvcc-flag nvcc's shell would interpret: refused before any compile
    rspec = runner or RunnerSpec("gpu", tuple(args), mode, policy_dict(policy or {}), timer, seed, rtol, atol, flops)
    progress = Progress()
    # a batch builder of the caller's without a per-job one cannot stream
    streaming = (strategy == "exhaustive" and (builder is None or build_fn is not None)) if stream is None else stream
    if ray is not None:
        from cudalens.tune import ray_backend

        rb = ray_backend.init(ray)
        actors = ray_backend.start_workers(rspec, num_workers)  # they start while this process compiles
        device = rb.get(actors[0].describe.remote())
        builder = builder if builder is not None else ray_backend.ray_builder(cache_dir=cache_dir)
    else:
        local = rspec.make(0)
        device = local.describe()
    try:
        spec = TuneSpec(source, kernel, space, tuple(grid), tuple(block), shared, cc or device["cc"], tuple(flags),
                        strategy, max_fraction, patience, min_gain, seed, keep_spills, min_occupancy,
                        int(device.get("sm_count") or 132), reference)
        prep = prepare(spec, rspec, device["name"], db, workers=compile_workers, cache_dir=cache_dir, builder=builder,
                       progress=progress, stream=streaming, build_fn=build_fn or build_one)
        if on_event:
            on_event(f"{len(prep.configs)} configurations, {progress.compiled} compiled in {prep.compile_seconds:.1f} s, "
                     f"{progress.pruned} pruned, {progress.resumed} already measured (session {prep.session_id})")
        if ray is not None:
            ray_backend.run_ray(prep, rspec, db, actors=actors, progress=progress, on_outcome=on_outcome,
                                on_event=on_event, cache_dir=cache_dir)
        else:
            run_local(prep, rspec, db, runner=local, progress=progress, on_outcome=on_outcome, workers=compile_workers)
    finally:
        if ray is None:
            local.close()
    summary = summarize_session(db, prep, top=top, wall_s=round(time.perf_counter() - t0, 3))
    summary["device"] = device
    summary["events"] = progress.events
    return summary
