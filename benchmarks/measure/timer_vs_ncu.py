"""Short kernels: each harness timer against Nsight Compute's gpu__time_duration (issue #25).

Usage (repository root, on the GPU):  PYTHONPATH=src python benchmarks/measure/timer_vs_ncu.py [OUTDIR]
OUTDIR defaults to $OUT. Never changes clocks. About 3-5 minutes.

Kernels of about 2 to 20 us (a memory-bound `scale` and a compute-bound `compute_loop`, several sizes
each, from benchmarks/measure/measure_kernels.cu). For each:
  - the harness in cold mode (its own L2 flush before every launch), one process per timer:
      events      the default: event interval less the event floor, per launch
      events-raw  the event interval as it is
      cupti       the kernel's start..end from CUPTI activity records
  - ncu's gpu__time_duration.sum of NCU_LAUNCHES launches (>= 15), --cache-control none with the same
    L2 flush before every launch, --clock-control none: the launches the harness times.
Writes OUTDIR/timer_vs_ncu.json: device, driver, date, command, per kernel the medians, the ratios to
ncu, the ncu samples, and a least-squares fit  timer = a + b * ncu  over the kernels of >= 3 us
(the offset the certificate states), and prints a table.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(os.path.dirname(HERE)), "src")
KERNELS = os.path.join(HERE, "measure_kernels.cu")
sys.path.insert(0, SRC)
sys.path.insert(0, HERE)

NCU_LAUNCHES = 20
POLICY = dict(max_time_s=1.0, min_time_s=0.3)
TIMERS = ("events", "events-raw", "cupti")
FROM_US = 3.0


def configs(sm_count: int) -> list[dict]:
    out = [{"label": "empty", "kernel": "empty_kernel", "grid": [1, 1, 1], "block": [32, 1, 1], "args": []}]
    for n in (1 << 17, 1 << 18, 3 << 17, 1 << 19, 3 << 18, 1 << 20, 3 << 19, 1 << 21, 3 << 20, 1 << 22, 3 << 21):
        out.append({"label": f"scale {n >> 10}K", "kernel": "scale", "grid": [(n + 255) // 256, 1, 1],
                    "block": [256, 1, 1],
                    "args": [f"float32[{n}]:rand", f"float32[{n}]:zeros", "float32=2", f"int32={n}"]})
    for iters in (150, 300, 600, 1000, 1500, 2000):
        out.append({"label": f"compute {iters}", "kernel": "compute_loop", "grid": [sm_count, 1, 1],
                    "block": [256, 1, 1], "args": [f"float32[{sm_count * 256}]:zeros", f"int32={iters}"]})
    return out


def worker(timer: str, cfg_path: str, out_path: str) -> int:
    from cudalens.measure.argspec import parse_args
    from cudalens.measure.harness import bench_kernel

    rows = []
    for cfg in json.load(open(cfg_path)):
        try:
            r = bench_kernel(KERNELS, cfg["kernel"], tuple(cfg["grid"]), tuple(cfg["block"]), parse_args(cfg["args"]),
                             mode="cold", timer=timer, **POLICY)
            rows.append({"label": cfg["label"], "median_s": r.summary.median, "samples": len(r.samples),
                         "rel_stdev": r.summary.rel_stdev, "timer": r.config.get("timer"),
                         "certificate_timer": (r.certificate or {}).get("timer"),
                         "event_floor_s": (r.certificate or {}).get("event_floor_s")})
        except Exception as exc:  # noqa: BLE001 - one failing config must not lose the others
            rows.append({"label": cfg["label"], "error": f"{type(exc).__name__}: {exc}"[:300]})
    json.dump(rows, open(out_path, "w"), indent=1)
    return 0


def run_harness(out_dir: str, cfg_path: str) -> dict:
    res = {}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    for timer in TIMERS:
        out = os.path.join(out_dir, f"harness_{timer}.json")
        t0 = time.monotonic()
        try:
            p = subprocess.run([sys.executable, __file__, "--worker", timer, cfg_path, out],
                               capture_output=True, text=True, timeout=240, env=env)
            err = f"exit {p.returncode}: {p.stderr[-500:]}"
        except subprocess.TimeoutExpired:
            err = "timed out after 240 s"
        res[timer] = json.load(open(out)) if os.path.exists(out) else {"error": err}
        print(f"harness {timer}: {time.monotonic() - t0:.0f} s", flush=True)
    return res


def fit(pairs: list[tuple[float, float]]) -> dict:
    """timer = a + b * ncu (least squares) over (ncu_s, timer_s) pairs, and the worst |ratio - 1|."""
    if len(pairs) < 2:
        return {"n": len(pairs)}
    x = np.array([p[0] for p in pairs])
    y = np.array([p[1] for p in pairs])
    b, a = np.polyfit(x, y, 1)
    ratios = y / x
    resid = y - (a + b * x)
    return {"n": len(pairs), "offset_s": float(a), "slope": float(b),
            "max_abs_residual_s": float(np.max(np.abs(resid))),
            "ratio_min": float(ratios.min()), "ratio_max": float(ratios.max()),
            "within_2pct": bool(np.all(np.abs(ratios - 1) <= 0.02)),
            "median_difference_s": float(np.median(y - x))}


def main(out_dir: str) -> int:
    from measure_gpu import run_ncu

    from cudalens.hardware import cuda_driver as cu

    os.makedirs(out_dir, exist_ok=True)
    sm = cu.device_attribute(cu.cu_device(0), "MULTIPROCESSOR_COUNT")
    cfgs = configs(sm)
    cfg_path = os.path.join(out_dir, "timer_vs_ncu_configs.json")
    json.dump(cfgs, open(cfg_path, "w"), indent=1)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    harness = run_harness(out_dir, cfg_path)
    ncu = run_ncu(cfgs, out_dir, "same", NCU_LAUNCHES)
    medians = ncu.get("medians_s") or [None] * len(cfgs)
    rows, fits = [], {}
    for i, c in enumerate(cfgs):
        row: dict = {"label": c["label"], "ncu_median_s": medians[i],
                     "ncu_samples": len((ncu.get("per_config_s") or [[]] * len(cfgs))[i])}
        for t in TIMERS:
            h = harness[t]
            v = h[i].get("median_s") if isinstance(h, list) and i < len(h) else None
            row[f"{t}_median_s"] = v
            row[f"{t}_over_ncu"] = (v / medians[i]) if v and medians[i] else None
        rows.append(row)
    for t in TIMERS:
        pairs = [(r["ncu_median_s"], r[f"{t}_median_s"]) for r in rows
                 if r["ncu_median_s"] and r[f"{t}_median_s"] and r["ncu_median_s"] >= FROM_US * 1e-6
                 and r["ncu_median_s"] <= 25e-6]
        fits[t] = fit(pairs)
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "device": smi,
              "command": "PYTHONPATH=src python benchmarks/measure/timer_vs_ncu.py OUTDIR", "policy": POLICY,
              "ncu_launches": NCU_LAUNCHES, "from_us": FROM_US, "configs": cfgs, "rows": rows,
              "fits_from_3us": fits, "harness": harness,
              "ncu": {k: v for k, v in ncu.items() if k not in ("per_config_s",)},
              "ncu_per_config_s": ncu.get("per_config_s")}
    json.dump(result, open(os.path.join(out_dir, "timer_vs_ncu.json"), "w"), indent=1)
    print(smi)
    print(f"{'kernel':14s}{'ncu us':>9s}" + "".join(f"{t + ' us':>14s}{'/ncu':>7s}" for t in TIMERS))
    for r in rows:
        line = f"{r['label']:14s}" + (f"{r['ncu_median_s'] * 1e6:9.3f}" if r["ncu_median_s"] else f"{'-':>9s}")
        for t in TIMERS:
            v, q = r[f"{t}_median_s"], r[f"{t}_over_ncu"]
            line += (f"{v * 1e6:14.3f}" if v else f"{'-':>14s}") + (f"{q:7.3f}" if q else f"{'-':>7s}")
        print(line)
    for t, f in fits.items():
        print(f"fit {t} (ncu >= {FROM_US} us): {json.dumps(f)}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.exit(worker(*sys.argv[2:5]))
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")))
