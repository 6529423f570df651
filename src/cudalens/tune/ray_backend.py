"""The sweep on many GPUs through Ray (the optional extra ``cudalens[ray]``): no scheduler of ours.

* **Compilation** runs as Ray tasks on CPU workers (``num_cpus=1`` each); a task returns the facts
  and the cubin's bytes, which the driver keeps in its own compile cache (so the workers may be on
  other nodes). With the exhaustive strategy the compile tasks stream: the GPUs measure the
  survivors known so far while the rest compile.
* **Measurement** runs on one actor per GPU (``num_gpus=1``: Ray sets ``CUDA_VISIBLE_DEVICES``, so
  the actor's device 0 is its GPU). Each actor makes its runner once, computes the reference
  configuration's outputs on its own GPU, and measures the configurations the driver hands it.
* The **driver** asks the strategy for as many configurations as there are idle actors, stores each
  result in the history database as it arrives (one transaction each), and tells the strategy.
* A **dead worker** (its process killed, its node lost) raises ``RayActorError`` for the call in
  flight: that configuration goes back to the strategy's queue and is handed out first, and a new
  actor takes the freed GPU. A configuration that kills ``max_attempts`` workers is stored as failed.

``address``: ``"auto"`` joins the running cluster (``ray start --head`` beforehand) and starts a
local one when there is none; ``"local"`` always starts a new local cluster; any other text is a
cluster address (``ray://host:10001`` or ``host:6379``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cudalens.compiled.cache import atomic_write
from cudalens.errors import InputError
from cudalens.tune.build import (
    BuildFacts,
    BuildJob,
    build_one,
    default_cache_dir,
)
from cudalens.tune.engine import (
    Prepared,
    Progress,
    item_for,
    launch_for,
    settle,
)
from cudalens.tune.runners import Outcome, RunnerSpec
from cudalens.tune.space import Config


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError("--ray needs Ray: pip install 'cudalens[ray]' (without --ray the tuner runs locally)") from None
    return ray


def init(address: str | None, **kwargs: Any) -> Any:
    """Connect to (or start) a Ray cluster; returns the ray module."""
    ray = _ray()
    if ray.is_initialized():
        return ray
    opts = {"include_dashboard": False, "log_to_driver": False, **kwargs}
    if address in (None, "", "local"):
        ray.init(address="local", **opts)  # a new local cluster, never one left over by another process
    elif address == "auto":
        try:
            ray.init(address="auto", **opts)
        except ConnectionError:
            ray.init(**opts)
    else:
        ray.init(address=address, **opts)
    return ray


def _compile_task(fn: Callable[[BuildJob], BuildFacts], job: BuildJob) -> tuple[dict[str, Any], bytes]:
    facts = fn(job)
    data = Path(facts.cubin_path).read_bytes() if facts.ok and facts.cubin_path and Path(facts.cubin_path).exists() else b""
    return facts.to_dict(), data


def ray_builder(fn: Callable[[BuildJob], BuildFacts] = build_one, cache_dir: str | None = None):
    """A ``builder`` for :func:`cudalens.tune.engine.prepare` that compiles on Ray CPU workers."""

    def build(jobs: Sequence[BuildJob], workers: int | None = None) -> dict[str, BuildFacts]:
        ray = _ray()
        task = ray.remote(num_cpus=1)(_compile_task)
        refs = [task.remote(fn, j) for j in jobs]
        out: dict[str, BuildFacts] = {}
        for d, data in ray.get(refs):
            f = _local_cubin(d, data, cache_dir)
            out[f.config_key] = f
        return out

    return build


def _local_cubin(d: dict[str, Any], data: bytes, cache_dir: str | None) -> BuildFacts:
    """Facts from a compile task, their cubin kept on this (the driver's) machine."""
    f = BuildFacts.from_dict(d)
    if f.ok and data and not Path(f.cubin_path).exists():
        local = Path(cache_dir or default_cache_dir()) / "ray" / Path(f.cubin_path).name
        atomic_write(local, data)
        f = BuildFacts.from_dict({**d, "cubin_path": str(local)})
    return f


class _Worker:
    """The GPU actor's body (wrapped with ray.remote(num_gpus=1) at run time)."""

    def __init__(self, spec: RunnerSpec) -> None:
        self.runner = spec.make(0)
        self.name = f"ray:{os.uname().nodename}:gpu{os.environ.get('CUDA_VISIBLE_DEVICES', '?')}:pid{os.getpid()}"

    def describe(self) -> dict[str, Any]:
        return {**self.runner.describe(), "worker": self.name}

    def set_reference(self, item: Any) -> bool:
        self.runner.set_reference(item)
        return True

    def measure(self, item: Any) -> Outcome:
        out = self.runner.measure(item)
        return Outcome(out.config_key, out.status, out.reason, out.result, self.name)


def start_workers(runner_spec: RunnerSpec, n: int | None = None) -> list[Any]:
    """``n`` GPU actors (default: one per GPU of the cluster), created at once; each makes its
    runner in its own process. ``num_cpus=0``: the actor's host thread takes no CPU slot, so the
    compile tasks can use every core."""
    ray = _ray()
    gpus = int(ray.cluster_resources().get("GPU", 0))
    n = n or gpus
    if n < 1 or gpus < 1:
        raise InputError("the Ray cluster has no GPU (num_gpus=0); start it on GPU nodes or run without --ray")
    if n > gpus:
        raise InputError(f"{n} GPU workers asked for, but the Ray cluster has {gpus} GPUs")
    actor_cls = ray.remote(num_gpus=1, num_cpus=0, max_restarts=0)(_Worker)
    return [actor_cls.remote(runner_spec) for _ in range(n)]


def _running_call(ray: Any, calls: Sequence[Any], error: type) -> Any:
    """Of a dead actor's calls in submission order (an actor runs them in that order), the one it
    was running: the first that did not finish with a result. Calls before it finished; their
    results are read again later."""
    for call in calls:
        ready, _ = ray.wait([call], timeout=30)
        if not ready:
            return call
        try:
            ray.get(call)
        except error:
            return call
    return None


def run_ray(prep: Prepared, runner_spec: RunnerSpec, db: str | None, *, num_workers: int | None = None,
            actors: Sequence[Any] = (), depth: int | None = None,
            max_attempts: int = 2, progress: Progress | None = None, cache_dir: str | None = None,
            on_outcome: Callable[[Outcome], None] | None = None, on_event: Callable[[str], None] | None = None) -> Progress:
    """Measure with one actor per GPU of the cluster (``actors``, or new ones) until the strategy is
    finished.

    ``depth``: configurations handed to each actor ahead (it runs them in order), so that an actor
    never waits while the driver stores a result and picks the next configuration; default 2 for the
    exhaustive strategy (its order does not depend on results), 1 for the others (each asks with
    every result known but those in flight). When an actor dies, only the configuration it was
    running (the first in its queue) counts as an attempt; the ones queued behind it go back unharmed."""
    ray = _ray()
    from ray.exceptions import RayActorError

    progress = progress or Progress()
    depth = depth or (2 if prep.spec.strategy == "exhaustive" else 1)
    ref_item = None
    if prep.reference:
        ref_item = item_for(prep.facts[prep.reference], launch_for(prep.spec, Config.from_key(prep.reference))[0])

    def note(text: str) -> None:
        progress.events.append(text)
        if on_event:
            on_event(text)

    def start() -> Any:
        a = start_workers(runner_spec, 1)[0]
        ray.get(a.set_reference.remote(ref_item))
        return a

    t0 = time.perf_counter()
    compile_task = ray.remote(num_cpus=1)(_compile_task)
    compiling = {compile_task.remote(prep.build_fn, j) for j in prep.pending}  # streaming: compile while measuring
    live = list(actors) if actors else start_workers(runner_spec, num_workers)
    ray.get([a.set_reference.remote(ref_item) for a in live])  # in parallel: each GPU runs the reference
    note("workers: " + "; ".join(str(d) for d in ray.get([a.describe.remote() for a in live])))
    queues: dict[int, list[Any]] = {id(a): [] for a in live}  # per actor, its calls in flight, in order
    inflight: dict[Any, tuple[Any, str]] = {}
    attempts: dict[str, int] = {}
    dead_head: dict[int, Any] = {}  # per dead actor, the call it was running
    while True:
        if not compiling and prep.pending:
            prep.compile_seconds += time.perf_counter() - t0
            prep.compiles_done()
        for actor in list(live):
            while len(queues[id(actor)]) < depth and not prep.strategy.finished:
                keys = prep.strategy.ask(1)
                if not keys:
                    break
                launch, _ = launch_for(prep.spec, Config.from_key(keys[0]))
                call = actor.measure.remote(item_for(prep.facts[keys[0]], launch))
                inflight[call] = (actor, keys[0])
                queues[id(actor)].append(call)
        if not inflight and not compiling:
            break
        ready, _ = ray.wait(list(inflight) + list(compiling), num_returns=1)
        for ref in ready:
            if ref in compiling:
                compiling.discard(ref)
                d, data = ray.get(ref)
                prep.add(_local_cubin(d, data, cache_dir))
                continue
            actor, key = inflight.pop(ref)
            try:
                out = ray.get(ref)
            except RayActorError as exc:
                if actor in live:  # the first news of this death: a new actor takes the freed GPU
                    live.remove(actor)
                    ray.kill(actor)
                    dead_head[id(actor)] = _running_call(ray, queues[id(actor)], RayActorError)
                    fresh = start()
                    live.append(fresh)
                    queues[id(fresh)] = []
                queues[id(actor)].remove(ref)
                if ref != dead_head[id(actor)]:
                    note(f"{key} was queued on a dead worker; handed out again")
                    prep.strategy.requeue(key)
                    continue
                attempts[key] = attempts.get(key, 0) + 1
                note(f"worker died measuring {key} ({type(exc).__name__}); attempt {attempts[key]}")
                if attempts[key] < max_attempts:
                    prep.strategy.requeue(key)
                    continue
                out = Outcome(key, "failed", f"{attempts[key]} workers died while measuring it", None, "ray")
            else:
                queues[id(actor)].remove(ref)
            settle(db, prep, out, progress, on_outcome)
    for a in live:
        ray.kill(a)
    return progress
