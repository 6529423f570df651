"""Summarize the tuning runs of one machine: does each search find the exhaustive winner (within
the noise), with how many measurements; how kernel_tuner compares. Writes OUTDIR/summary.json.

    python3 benchmarks/tune/compare.py benchmarks/results/h100/tune

The noise is measured, not assumed: the same configurations were measured by two exhaustive runs
(cudalens_exhaustive.json, cudalens_exhaustive_rep2.json), and the run-to-run difference of a
configuration's median (|a - b| / min(a, b)) over all of them gives the noise level (its median
and 95th percentile). A search's winner is "the same within the noise" when it is the exhaustive
winner, or when its median in the exhaustive run is within that 95th percentile of the winner's.
"""

from __future__ import annotations

import glob
import json
import os
import sys

import numpy as np

from cudalens.tune.report import win_probability


def load(path: str) -> dict:
    with open(path) as fh:
        return json.load(fh)


def medians(rep: dict) -> dict[str, float]:
    return {k: v["median_s"] for k, v in rep.get("all_results", {}).items() if v["status"] == "measured"}


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def speedups(runs: dict) -> dict:
    """Every two-GPU Ray sweep against every one-GPU sweep of the same directory: the wall times
    (each including the start of its own Ray cluster, if any) and the same without those starts."""
    two = {n: r for n, r in runs.items() if n.startswith("cudalens_exhaustive") and n.endswith("2gpu")}
    one = {n: r for n, r in runs.items() if n.startswith("cudalens_exhaustive") and n.endswith(("1gpu", "local"))}
    out = {}
    for n2, r2 in two.items():
        for n1, r1 in one.items():
            w1, w2 = r1["wall_seconds_total"], r2["wall_seconds_total"]
            i1, i2 = r1.get("ray_init_seconds") or 0.0, r2.get("ray_init_seconds") or 0.0
            out[f"{n1} / {n2}"] = {
                "one_gpu_wall_s": w1, "two_gpu_wall_s": w2, "speedup": w1 / w2,
                "one_gpu_cluster_start_s": i1, "two_gpu_cluster_start_s": i2,
                "speedup_without_cluster_starts": (w1 - i1) / (w2 - i2),
                "measured": [r1["measured"], r2["measured"]],
                "same_winner": (r1.get("best") or {}).get("config") == (r2.get("best") or {}).get("config"),
                "workers": [sorted({v["worker"] for v in r["all_results"].values() if v.get("worker")}) for r in (r1, r2)],
            }
    if len(out) == 1:
        return {"ray_speedup": next(iter(out.values()))}
    return {"ray_speedups": out} if out else {}


def main() -> None:
    d = sys.argv[1]
    runs = {os.path.basename(p)[:-5]: load(p) for p in sorted(glob.glob(os.path.join(d, "cudalens_*.json")))
            if "spill" not in p}
    exh = [r for n, r in runs.items() if n.startswith("cudalens_exhaustive")]
    base = medians(exh[0]) if exh else {}
    best_key = min(base, key=base.get) if base else None
    noise = None
    if len(exh) >= 2:
        other = medians(exh[1])
        common = sorted(set(base) & set(other))
        rel = np.array([abs(base[k] - other[k]) / min(base[k], other[k]) for k in common])
        noise = {"configurations": len(common), "median_rel": float(np.median(rel)),
                 "p95_rel": float(np.percentile(rel, 95)), "max_rel": float(rel.max()),
                 "winners": [min(medians(r), key=medians(r).get) for r in exh]}
    tol = noise["p95_rel"] if noise else 0.01
    out = {"exhaustive_winner": best_key, "exhaustive_winner_median_s": base.get(best_key), "noise": noise,
           "tolerance_rel": tol, "runs": {}}
    for name, r in runs.items():
        b = (r.get("best") or {}).get("config")
        rel = (base[b] - base[best_key]) / base[best_key] if b in base and best_key else None
        out["runs"][name] = {
            "strategy": r["strategy"], "configurations": r["configurations"], "measured": r["measured"],
            "measured_fraction": r["measured"] / r["configurations"], "pruned": r["pruned"],
            "pruned_by_kind": r["pruned_by_kind"], "stop_reason": r["stop_reason"], "best": b,
            "best_median_s": (r.get("best") or {}).get("median_s"), "best_in_exhaustive_rel": rel,
            "same_as_exhaustive_within_noise": (b == best_key) or (rel is not None and rel <= tol),
            "stability": r.get("stability"), "wall_seconds": r.get("wall_seconds_total"),
            "compile_seconds": r.get("compile_seconds"), "device": r.get("device", {}).get("name"),
        }
    spill = os.path.join(d, "cudalens_spill_check.json")
    if os.path.exists(spill):
        s = load(spill)["spilled"]
        fastest = min(s.items(), key=lambda kv: kv[1]["median_s"])
        out["pruned_for_spills_measured"] = {"count": len(s), "fastest": fastest[0], "fastest_median_s": fastest[1]["median_s"],
                                             "slower_than_winner_rel": (fastest[1]["median_s"] - base[best_key]) / base[best_key]
                                             if best_key else None}
    kts = {os.path.basename(p)[:-5]: load(p) for p in sorted(glob.glob(os.path.join(d, "kernel_tuner*.json")))}
    for name, k in kts.items():
        b = k.get("best")
        rel = (base[b] - base[best_key]) / base[best_key] if b in base and best_key else None
        times = {t["config"]: [float(x) for x in (t.get("times_ms") or [])] for t in k["top5"]}
        p_fastest = win_probability(times) if all(len(v) >= 2 for v in times.values()) else {}
        out["runs"][name] = {"tool": "kernel_tuner", "strategy": k["strategy"], "measured": k["configurations_measured"],
                             "p_fastest_top5_bootstrap_of_its_samples": p_fastest,
                             "valid": k["valid"], "best": b, "best_time_ms": k["best_time_ms"],
                             "best_in_cudalens_exhaustive_rel": rel, "wall_seconds": k["wall_seconds"],
                             "top5": [t["config"] for t in k["top5"]], "device": k.get("device")}
    if len(kts) >= 2:
        out["kernel_tuner_same_winner_across_runs"] = len({k.get("best") for k in kts.values()}) == 1
    if kts and base:  # hot means of 7 (kernel_tuner) against cold medians (cudalens), over the same configurations
        for name, k in kts.items():
            common = sorted(set(k.get("all", {})) & set(base))
            if len(common) > 2:
                out["runs"][name]["spearman_vs_cudalens_exhaustive"] = spearman([k["all"][c] for c in common],
                                                                                [base[c] for c in common])
    out.update(speedups(runs))
    with open(os.path.join(d, "summary.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
