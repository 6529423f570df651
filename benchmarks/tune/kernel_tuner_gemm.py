"""The same space through kernel_tuner (brute force, its defaults: 7 iterations averaged, no L2 flush).

    python3 benchmarks/tune/kernel_tuner_gemm.py OUTDIR [TAG] [--runs=N]

kernel_tuner needs the block size as a tunable parameter: block_size_x is added with the
restriction block_size_x == (BM/TM)*(BN/TN), which leaves exactly the same 295 configurations
(restrictions given as a function: see ``restrict``).
Tunable parameters are not #defined (defines={}), since they are the kernel's template parameters;
the kernel is compiled by name expression ("gemm<64,128,...>") through CuPy. The output of every
configuration is checked against numpy's product (kernel_tuner's ``answer``).

``--runs=N`` tunes N times in this one process, each run a new kernel_tuner session with its own
cache file (``kernel_tuner{TAG}_run{i}.json``): every configuration is measured again in each run.
CuPy memoizes the modules it compiled in this process, so runs after the first skip NVRTC (their
``compile_s`` says so); the measurements are new.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_space as G


def restrict(p: dict) -> bool:
    """The space's restrictions as one function: kernel_tuner 1.5.0's parser of restriction strings
    returned an empty space for "block_size_x == (BM//TM)*(BN//TN)" (0 of 2592 points; checked with
    kernel_tuner.searchspace.Searchspace on the CPU), a function is evaluated as written."""
    threads = (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])
    return (p["BM"] % p["TM"] == 0 and p["BN"] % p["TN"] == 0 and p["block_size_x"] == threads
            and (p["BM"] * p["BK"]) % threads == 0 and (p["BN"] * p["BK"]) % threads == 0)


def keyf(r: dict) -> str:
    return ",".join(f"{k}={r[k]}" for k in G.VALUES)


def tune_once(kernel_tuner, src: str, args: list, ref: np.ndarray, cache: str) -> dict:
    params = dict(G.VALUES)
    params["block_size_x"] = [32, 64, 128, 256, 512, 1024]
    t0 = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        "gemm<BM,BN,BK,TM,TN>", src, (G.N, G.M), args, params, restrictions=[restrict], grid_div_x=["BN"],
        grid_div_y=["BM"], lang="cupy", defines={"kernel_tuner": 1}, answer=[None] * 7 + [ref], atol=5e-2,
        strategy="brute_force", verbose=False, quiet=True, cache=cache)
    wall = time.perf_counter() - t0
    ok = [r for r in results if isinstance(r.get("time"), (int, float))]
    ok.sort(key=lambda r: r["time"])

    def total(field: str) -> float:  # kernel_tuner's own per-configuration timings, in ms
        return round(sum(float(r[field]) for r in results if isinstance(r.get(field), (int, float))) / 1e3, 3)

    return {
        "tool": "kernel_tuner", "version": getattr(kernel_tuner, "__version__", ""),
        "strategy": "brute_force", "configurations_measured": len(results), "valid": len(ok),
        "invalid": [{"config": keyf(r), "time": str(r.get("time"))} for r in results if r not in ok][:50],
        "best": keyf(ok[0]) if ok else None, "best_time_ms": ok[0]["time"] if ok else None,
        "runner_up_rel": (ok[1]["time"] - ok[0]["time"]) / ok[0]["time"] if len(ok) > 1 else None,
        "top5": [{"config": keyf(r), "time_ms": r["time"], "times_ms": r.get("times")} for r in ok[:5]],
        "wall_seconds": round(wall, 3), "compile_s": total("compile_time"),
        "verification_s": total("verification_time"), "benchmark_s": total("benchmark_time"),
        "all": {keyf(r): r["time"] for r in ok},
        "device": env.get("device_name"), "iterations": env.get("iterations"),
        "script": "benchmarks/tune/kernel_tuner_gemm.py",
    }


def main() -> None:
    argv = [a for a in sys.argv[1:] if not a.startswith("--runs=")]
    runs = int(next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--runs=")), "1"))
    out = argv[0]
    tag = argv[1] if len(argv) > 1 else ""
    import kernel_tuner

    with open(G.SOURCE) as fh:
        src = fh.read()
    rng = np.random.default_rng(0)
    a = rng.random(G.M * G.K, dtype=np.float32)
    b = rng.random(G.K * G.N, dtype=np.float32)
    c = np.zeros(G.M * G.N, dtype=np.float32)
    args = [np.int32(G.M), np.int32(G.N), np.int32(G.K), np.float32(1), a, b, np.float32(0), c]
    ref = (a.reshape(G.M, G.K).astype(np.float64) @ b.reshape(G.K, G.N).astype(np.float64)).astype(np.float32).ravel()
    for i in range(1, runs + 1):
        name = f"{tag}_run{i}" if runs > 1 else tag
        summary = tune_once(kernel_tuner, src, args, ref, os.path.join(out, f"kt_cache{name}.json"))
        summary["run"] = i
        with open(os.path.join(out, f"kernel_tuner{name}.json"), "w") as fh:
            json.dump(summary, fh, indent=1, default=str)
        print(f"kernel_tuner{name}: {summary['configurations_measured']} measured ({summary['valid']} valid), best "
              f"{summary['best']} {summary['best_time_ms']} ms (runner-up +{100 * (summary['runner_up_rel'] or 0):.2f} %), "
              f"wall {summary['wall_seconds']:.1f} s (compile {summary['compile_s']} s, verification "
              f"{summary['verification_s']} s, benchmark {summary['benchmark_s']} s)", flush=True)


if __name__ == "__main__":
    main()
