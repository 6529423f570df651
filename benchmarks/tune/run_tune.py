"""Tune examples/tune/gemm.cu with cudalens on this machine's GPU(s); one JSON per strategy.

    python3 benchmarks/tune/run_tune.py OUTDIR exhaustive guided optuna   # local, GPU 0
    python3 benchmarks/tune/run_tune.py OUTDIR --ray exhaustive            # through Ray, every GPU
    python3 benchmarks/tune/run_tune.py OUTDIR --ray --ray-workers=1 exhaustive  # through Ray, one GPU actor
    python3 benchmarks/tune/run_tune.py OUTDIR --seed=1 --tag=_rep guided  # a repeat: a new session

With --ray this process starts its own local Ray cluster (ray.init without an address) and its
wall time includes that start (``ray_init_seconds``), so runs in separate processes compare.
Each JSON holds the session summary (best configuration, top-5 with confidence intervals and
bootstrap P(fastest), pruning counts, configurations measured, wall time) and every measured
configuration's median, so compare.py can check the winners against the exhaustive run.
"""

from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_space as G

from cudalens.tune import (
    make_space,
    store,
    tune,
)


def main() -> None:
    out, rest = sys.argv[1], sys.argv[2:]
    ray = None
    if "--ray" in rest:
        ray = "local"
        rest.remove("--ray")
    tag, seed, workers = "", 0, None
    for a in list(rest):
        if a.startswith("--ray-workers="):
            workers = int(a.split("=", 1)[1])
            rest.remove(a)
        elif a.startswith("--tag="):
            tag = a.split("=", 1)[1]
            rest.remove(a)
        elif a.startswith("--seed="):
            seed = int(a.split("=", 1)[1])
            rest.remove(a)
    db = os.environ.get("TUNE_DB", "/tmp/cudalens-tune.db")
    cache = os.environ.get("TUNE_CACHE", "/tmp/cudalens-tune-cache")
    os.makedirs(out, exist_ok=True)
    space = make_space(G.VALUES, G.RESTRICTIONS, G.CONSTANTS)
    policy = dict(G.POLICY)
    if os.environ.get("TUNE_MIN_TIME"):  # seconds of sampling at least per configuration (the 2-GPU runs)
        policy["min_time_s"] = float(os.environ["TUNE_MIN_TIME"])
    t_init = time.perf_counter()
    if ray:
        from cudalens.tune import ray_backend  # noqa: PLC0415

        ray_backend.init(ray, object_store_memory=2**30)
    init_s = time.perf_counter() - t_init  # starting the Ray cluster: counted in the first sweep's wall time
    for strategy in rest:
        t0 = time.perf_counter()
        events: list[str] = []
        rep = tune(G.SOURCE, G.KERNEL, space, grid=G.GRID, block=G.BLOCK, args=G.ARGS, strategy=strategy, db=db,
                   policy=policy, flops=G.FLOPS, ray=ray, cache_dir=cache, on_event=events.append, seed=seed,
                   num_workers=workers)
        wall = time.perf_counter() - t0 + init_s
        rep["ray_init_seconds"] = round(init_s, 3)
        init_s = 0.0
        rows = store.results(db, rep["session_id"])
        rep["all_results"] = {k: {"status": r.status, "median_s": r.median_s, "ci_low_s": r.ci_low_s,
                                  "ci_high_s": r.ci_high_s, "reason": r.reason, "predicted_cost": r.predicted_cost,
                                  "worker": r.worker, "seq": r.seq} for k, r in rows.items()}
        rep["wall_seconds_total"] = round(wall, 3)
        rep["ray"] = ray
        rep["ray_workers"] = workers
        rep["policy"] = policy
        rep["events"] = events
        rep["script"] = "benchmarks/tune/run_tune.py"
        name = f"cudalens_{strategy}{'_ray' if ray else ''}{tag}.json"
        with open(os.path.join(out, name), "w") as fh:
            json.dump(rep, fh, indent=1, default=str)
        best = rep["best"] or {}
        print(f"{strategy}{' (ray)' if ray else ''}: measured {rep['measured']} of {rep['configurations']}, pruned "
              f"{rep['pruned']}, best {best.get('config')} {best.get('median_s')}, stop: {rep['stop_reason']}, "
              f"wall {wall:.1f} s, compile {rep['compile_seconds']} s", flush=True)


if __name__ == "__main__":
    main()
