"""The tuning loop: compile every configuration (CPU, in parallel), let the models prune and order
them, measure what the strategy asks for, store each result as it comes, resume where a killed run
stopped. The GPU side is a runner (runners.py) in this process, or Ray actors (ray_backend.py).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudalens.errors import InputError
from cudalens.tune import expr as E
from cudalens.tune import store
from cudalens.tune.build import (
    BuildFacts,
    BuildJob,
    KernelSpec,
    build_all,
    build_one,
    jobs_for,
)
from cudalens.tune.prune import (
    AccessFacts,
    Launch,
    Verdict,
    access_facts,
    decide,
    rank_survivors,
)
from cudalens.tune.runners import MeasureItem, Outcome, RunnerSpec
from cudalens.tune.space import Config, Space
from cudalens.tune.strategies import Strategy, make_strategy


@dataclass(frozen=True)
class TuneSpec:
    """One tuning problem. ``grid``/``block``: up to three expressions each; ``shared``: dynamic
    shared memory in bytes (an expression)."""

    source: str
    kernel: str
    space: Space
    grid: tuple[str, ...]
    block: tuple[str, ...]
    shared: str = "0"
    cc: str = "9.0"
    flags: tuple[str, ...] = ()
    strategy: str = "guided"
    max_fraction: float = 0.5
    patience: int | None = None
    min_gain: float = 0.01
    seed: int = 0
    keep_spills: bool = False
    min_occupancy: float | None = None
    sm_count: int = 132
    reference: str | None = None  # config key whose outputs are the reference (default: the first survivor)
    use_access_model: bool = True

    def identity(self, runner: RunnerSpec, device_name: str) -> dict[str, Any]:
        src = Path(self.source)
        digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16] if src.is_file() else ""
        return {"source": str(src.resolve()), "source_sha": digest, "kernel": self.kernel, "space": self.space.to_dict(),
                "grid": list(self.grid), "block": list(self.block), "shared": self.shared, "cc": self.cc,
                "flags": list(self.flags), "strategy": self.strategy, "max_fraction": self.max_fraction,
                "patience": self.patience, "min_gain": self.min_gain, "seed": self.seed,
                "keep_spills": self.keep_spills, "min_occupancy": self.min_occupancy, "reference": self.reference,
                "runner": {"kind": runner.kind, "args": list(runner.args), "mode": runner.mode, "policy": runner.policy,
                           "timer": runner.timer, "seed": runner.seed, "rtol": runner.rtol, "atol": runner.atol},
                "device": device_name}


def _dims(exprs: Sequence[str], env: dict[str, int], what: str) -> tuple[int, int, int]:
    if not 1 <= len(exprs) <= 3:
        raise InputError(f"--{what} takes one to three expressions, got {len(exprs)}")
    vals = [E.parse(x, set(env), what=f"--{what}").integer(env, f"--{what}") for x in exprs]
    return tuple(vals + [1] * (3 - len(vals)))  # type: ignore[return-value]


def launch_for(spec: TuneSpec, config: Config) -> tuple[Launch | None, str | None]:
    env = spec.space.env(config)
    try:
        return Launch(_dims(spec.grid, env, "grid"), _dims(spec.block, env, "block"),
                      E.parse(spec.shared, set(env), what="--shared-mem").integer(env, "--shared-mem")), None
    except InputError as exc:
        return None, str(exc)


def check_expressions(spec: TuneSpec) -> None:
    """Parse --grid/--block/--shared-mem once against the space's names: bad text fails before any compile."""
    names = set(spec.space.names) | {c for c, _ in spec.space.constants}
    for what, exprs in (("grid", spec.grid), ("block", spec.block), ("shared", (spec.shared,))):
        if not 1 <= len(exprs) <= 3:
            raise InputError(f"--{what} takes one to three expressions, got {len(exprs)}")
        for x in exprs:
            E.parse(x, names, what=f"--{what}")


@dataclass
class Progress:
    """Counts as the run goes (for the CLI's progress line and the report)."""

    configs: int = 0
    compiled: int = 0
    pruned: int = 0
    measured: int = 0
    resumed: int = 0
    failed: int = 0
    events: list[str] = field(default_factory=list)


def source_model(spec: TuneSpec) -> Any:
    """The source model the access model reads (None when the file does not parse or it is off)."""
    if not spec.use_access_model:
        return None
    try:
        from cudalens.source.parse import parse_file

        return parse_file(spec.source)
    except Exception:  # noqa: BLE001 - no source model: the access predictions are simply absent
        return None


def verdict_for(spec: TuneSpec, config: Config, facts: BuildFacts, model: Any) -> Verdict:
    """The models' decision on one configuration (pure given the compiled facts and the source model)."""
    launch, err = launch_for(spec, config)
    acc: AccessFacts | None = None
    if model is not None and launch is not None and facts.ok:
        acc = access_facts(model, KernelSpec.parse(spec.kernel).name, launch.block, spec.space.env(config))
    return decide(facts, launch, cc=spec.cc, sm_count=spec.sm_count, launch_error=err,
                  keep_spills=spec.keep_spills, min_occupancy=spec.min_occupancy, access=acc)


def verdicts_for(spec: TuneSpec, configs: list[Config], facts: dict[str, BuildFacts]) -> dict[str, Verdict]:
    """The models' decision for every configuration."""
    model = source_model(spec)
    return {c.key: verdict_for(spec, c, facts[c.key], model) for c in configs}


def item_for(facts: BuildFacts, launch: Launch) -> MeasureItem:
    cubin = Path(facts.cubin_path).read_bytes() if facts.cubin_path else b""
    return MeasureItem(facts.config_key, facts.instance, facts.mangled, cubin, launch.grid, launch.block,
                       launch.shared_bytes)


@dataclass
class Prepared:
    """Everything decided before the first measurement. With streaming compilation (exhaustive),
    ``pending`` holds the compile jobs still to run; :meth:`add` takes each one's facts as it ends."""

    spec: TuneSpec
    session_id: int
    resumed: bool
    configs: list[Config]
    facts: dict[str, BuildFacts]
    verdicts: dict[str, Verdict]
    strategy: Strategy
    done: dict[str, store.ResultRow]
    reference: str | None
    compile_seconds: float
    pending: list[BuildJob] = field(default_factory=list)
    model: Any = None
    db: str | None = None
    progress: Progress | None = None
    build_fn: Callable[[BuildJob], BuildFacts] = build_one  # per job, picklable (pool processes, Ray tasks)

    def add(self, f: BuildFacts) -> Verdict:
        """One streamed compile result: its verdict, stored if pruned, else a new survivor (told its
        stored measurement when the session is resumed)."""
        self.facts[f.config_key] = f
        v = verdict_for(self.spec, Config.from_key(f.config_key), f, self.model)
        self.verdicts[f.config_key] = v
        if self.progress is not None:
            self.progress.compiled += f.ok
        if v.pruned:
            store.record_many_pruned(self.db, self.session_id, [(f.config_key, v.reason or "")])
            if self.progress is not None:
                self.progress.pruned += 1
            return v
        self.strategy.add_survivor(v)
        row = self.done.get(f.config_key)
        if row is not None and row.status in ("measured", "wrong", "failed"):
            self.strategy.tell(f.config_key, row.median_s if row.status == "measured" else None)
            if self.progress is not None:
                self.progress.resumed += 1
        return v

    def compiles_done(self) -> None:
        self.pending = []
        self.strategy.open = False
        self.strategy.tell_nothing()


def prepare(spec: TuneSpec, runner: RunnerSpec, device_name: str, db: str | None, *, workers: int | None = None,
            cache_dir: str | None = None, builder: Callable[..., dict[str, BuildFacts]] | None = None,
            progress: Progress | None = None, stream: bool = False,
            build_fn: Callable[[BuildJob], BuildFacts] = build_one) -> Prepared:
    """Open (or resume) the session, compile, prune, and make the strategy.

    ``stream`` (exhaustive only): compile only until the reference configuration (the first survivor
    in the space's order) is known and leave the other compile jobs in ``pending``, for a backend
    that measures while the rest compiles."""
    check_expressions(spec)
    if not Path(spec.source).is_file():
        raise InputError(f"{spec.source}: no such file")
    if stream and spec.strategy != "exhaustive":
        raise InputError("streaming compilation needs the exhaustive strategy (the others order all survivors first)")
    progress = progress or Progress()
    session_id, resumed = store.open_session(db, spec.identity(runner, device_name))
    configs = list(spec.space.configs())
    if not configs:
        raise InputError("no configuration satisfies the restrictions")
    progress.configs = len(configs)
    t0 = time.perf_counter()
    jobs = jobs_for(spec.source, KernelSpec.parse(spec.kernel), configs, spec.space.env, spec.cc, spec.flags, cache_dir)
    done = store.results(db, session_id)
    model = source_model(spec)
    if stream:
        strategy = make_strategy("exhaustive", [], {}, len(configs))
        strategy.open = True
        prep = Prepared(spec, session_id, resumed, configs, {}, {}, strategy, done, None, 0.0, [], model, db, progress,
                        build_fn)
        for i, job in enumerate(jobs):  # the reference: the first survivor in the space's order
            v = prep.add(build_fn(job))
            if not v.pruned:
                prep.reference = spec.reference or job.config_key
                prep.pending = jobs[i + 1:]
                break
        if spec.reference and spec.reference != prep.reference:
            raise InputError("--reference with streaming compilation: the reference is the first survivor")
        prep.compile_seconds = time.perf_counter() - t0
        if not prep.pending:
            prep.compiles_done()
        return prep
    facts = (builder or build_all)(jobs, workers)
    progress.compiled = sum(1 for f in facts.values() if f.ok)
    compile_s = time.perf_counter() - t0
    verdicts = {c.key: verdict_for(spec, c, facts[c.key], model) for c in configs}
    pruned = [(k, v.reason or "") for k, v in verdicts.items() if v.pruned]
    store.record_many_pruned(db, session_id, pruned)
    progress.pruned = len(pruned)
    survivors = rank_survivors(list(verdicts.values()))
    strategy = make_strategy(spec.strategy, survivors, {p.name: p.values for p in spec.space.params}, len(configs),
                             max_fraction=spec.max_fraction, patience=spec.patience, min_gain=spec.min_gain,
                             seed=spec.seed)
    for key, row in done.items():  # replay, in stored order, so the strategy continues where it stopped
        if row.status in ("measured", "wrong", "failed") and key in strategy.verdicts:
            strategy.tell(key, row.median_s if row.status == "measured" else None)
            progress.resumed += 1
    alive = {v.config_key for v in survivors}
    reference = spec.reference or next((c.key for c in configs if c.key in alive), None)
    if spec.reference and spec.reference not in alive:
        raise InputError(f"--reference {spec.reference!r} is not a configuration that survives the models")
    return Prepared(spec, session_id, resumed, configs, facts, verdicts, strategy, done, reference, compile_s,
                    [], model, db, progress, build_fn)


def settle(db: str | None, prep: Prepared, out: Outcome, progress: Progress,
           on_outcome: Callable[[Outcome], None] | None) -> None:
    """What every backend does with an outcome: store it (counted in ``progress`` when new), tell the
    strategy its median time (None when not measured), hand it to ``on_outcome``."""
    v = prep.verdicts.get(out.config_key)
    if store.record(db, prep.session_id, out.config_key, out.status, reason=out.reason, result=out.result,
                    predicted=v.predicted_cost if v else None, worker=out.worker):
        progress.measured += out.status != "failed"
        progress.failed += out.status == "failed"
    prep.strategy.tell(out.config_key, out.result.summary.median if out.status == "measured" and out.result else None)
    if on_outcome:
        on_outcome(out)


def run_local(prep: Prepared, runner_spec: RunnerSpec, db: str | None, *, runner: Any = None,
              progress: Progress | None = None, on_outcome: Callable[[Outcome], None] | None = None,
              workers: int | None = None) -> Progress:
    """Measure on one GPU in this process until the strategy is finished; compile jobs still
    pending (streaming) run meanwhile in a process pool."""
    progress = progress or Progress()
    own = runner is None
    runner = runner or runner_spec.make(0)
    pool = ProcessPoolExecutor(max_workers=max(1, workers or os.cpu_count() or 1)) if prep.pending else None
    futures = {pool.submit(prep.build_fn, j) for j in prep.pending} if pool else set()
    t0 = time.perf_counter()
    try:
        if prep.reference and not prep.strategy.finished:
            ref = prep.facts[prep.reference]
            runner.set_reference(item_for(ref, launch_for(prep.spec, Config.from_key(prep.reference))[0]))
        while True:
            for fut in [f for f in futures if f.done()]:
                futures.discard(fut)
                prep.add(fut.result())
            if pool is not None and not futures and prep.pending:
                prep.compile_seconds += time.perf_counter() - t0
                prep.compiles_done()
            if prep.strategy.finished:
                break
            keys = prep.strategy.ask(1)
            if not keys:
                if futures:
                    wait(futures, return_when=FIRST_COMPLETED)
                    continue
                break
            key = keys[0]
            launch, _ = launch_for(prep.spec, Config.from_key(key))
            out = runner.measure(item_for(prep.facts[key], launch))
            out = Outcome(out.config_key, out.status, out.reason, out.result, out.worker or f"local:{os.getpid()}")
            settle(db, prep, out, progress, on_outcome)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        if own:
            runner.close()
    return progress
