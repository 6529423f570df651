"""Why do short kernels time longer with the harness than under Nsight Compute? (issue #5)

Usage (repository root):  PYTHONPATH=src python benchmarks/measure/timing_probe.py OUTDIR

Part 1, the harness four ways, each in its own process (CUPTI tracing must not leak into the
event runs): timer events-raw (the event interval as it is) / cupti x mode cold / hot, for kernels
from an empty one to ~60 ms. The cupti runs also keep each sample's event time, so a slowdown
caused by tracing shows there.
Part 2, ncu's gpu__time_duration (clock control off) for the same kernels in three cache states:
  same  --cache-control none, the harness's own L2 flush kernel before every launch: the launches
        the harness times in cold mode, and nothing else;
  all   --cache-control all: ncu's default, which also invalidates the instruction and constant
        caches before every launch;
  hot   --cache-control none, no flush.
Writes OUTDIR/timing_probe.json and prints a table. Never changes clocks.
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

NCU_LAUNCHES = 15
POLICY = dict(max_time_s=1.2, min_time_s=0.3)


def configs(sm_count: int) -> list[dict]:
    blocks = sm_count * 8
    out = [{"label": "empty", "kernel": "empty_kernel", "grid": [1, 1, 1], "block": [32, 1, 1], "args": []}]
    for label, n in (("scale 256K", 1 << 18), ("scale 1M", 1 << 20), ("scale 2M", 1 << 21), ("scale 4M", 1 << 22),
                     ("scale 16M", 1 << 24), ("scale 64M", 1 << 26)):
        out.append({"label": label, "kernel": "scale", "grid": [(n + 255) // 256, 1, 1], "block": [256, 1, 1],
                    "args": [f"float32[{n}]:rand", f"float32[{n}]:zeros", "float32=2", f"int32={n}"]})
    for label, iters in (("compute ~0.6ms", 60_000), ("compute ~6ms", 600_000), ("compute ~60ms", 6_000_000)):
        out.append({"label": label, "kernel": "compute_loop", "grid": [blocks, 1, 1], "block": [256, 1, 1],
                    "args": [f"float32[{blocks * 256}]:zeros", f"int32={iters}"]})
    return out


def worker(timer: str, mode: str, cfg_path: str, out_path: str) -> int:
    from cudalens.measure.argspec import parse_args
    from cudalens.measure.harness import bench_kernel

    rows = []
    for cfg in json.load(open(cfg_path)):
        try:
            r = bench_kernel(KERNELS, cfg["kernel"], tuple(cfg["grid"]), tuple(cfg["block"]), parse_args(cfg["args"]),
                             mode=mode, timer=timer, **POLICY)
            ev = [s.event_seconds for s in r.samples if s.event_seconds is not None and not s.throttled]
            rows.append({"label": cfg["label"], "median_s": r.summary.median, "samples": len(r.samples),
                         "rel_stdev": r.summary.rel_stdev, "batch": r.config.get("batch"), "timer": r.config.get("timer"),
                         "event_median_s": float(np.median(ev)) if ev else None})
        except Exception as exc:  # noqa: BLE001 - one failing config must not lose the others
            rows.append({"label": cfg["label"], "error": f"{type(exc).__name__}: {exc}"[:300]})
    json.dump(rows, open(out_path, "w"), indent=1)
    return 0


def run_harness(out_dir: str, cfg_path: str) -> dict:
    res = {}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    for timer, mode in (("events-raw", "cold"), ("cupti", "cold"), ("events-raw", "hot"), ("cupti", "hot")):
        out = os.path.join(out_dir, f"harness_{timer}_{mode}.json")
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, __file__, "--worker", timer, mode, cfg_path, out],
                           capture_output=True, text=True, timeout=150, env=env)
        res[f"{timer}/{mode}"] = (json.load(open(out)) if os.path.exists(out)
                                  else {"error": f"exit {p.returncode}: {p.stderr[-500:]}"})
        print(f"harness {timer}/{mode}: {time.monotonic() - t0:.0f} s", flush=True)
    return res


def main(out_dir: str) -> int:
    from measure_gpu import run_ncu

    from cudalens.hardware import cuda_driver as cu

    os.makedirs(out_dir, exist_ok=True)
    sm = cu.device_attribute(cu.cu_device(0), "MULTIPROCESSOR_COUNT")
    cfgs = configs(sm)
    cfg_path = os.path.join(out_dir, "configs.json")
    json.dump(cfgs, open(cfg_path, "w"), indent=1)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "device": smi,
              "command": "PYTHONPATH=src python benchmarks/measure/timing_probe.py OUTDIR", "policy": POLICY,
              "configs": cfgs, "harness": run_harness(out_dir, cfg_path),
              "ncu": {s: run_ncu(cfgs, out_dir, s, NCU_LAUNCHES) for s in ("same", "all", "hot")}}
    json.dump(result, open(os.path.join(out_dir, "timing_probe.json"), "w"), indent=1)
    cols = ["events-raw/cold", "cupti/cold", "events-raw/hot", "cupti/hot"]
    print(f"{'config':16s}" + "".join(f"{c:>16s}" for c in cols) + "".join(f"{'ncu ' + s:>11s}" for s in ("same", "all", "hot"))
          + f"{'ev(cupti)':>11s}")
    for i, c in enumerate(cfgs):
        row = f"{c['label']:16s}"
        for col in cols:
            h = result["harness"][col]
            v = h[i].get("median_s") if isinstance(h, list) else None
            row += f"{v * 1e6:16.3f}" if v else f"{'-':>16s}"
        for s in ("same", "all", "hot"):
            v = (result["ncu"][s].get("medians_s") or [None] * len(cfgs))[i]
            row += f"{v * 1e6:11.3f}" if v else f"{'-':>11s}"
        h = result["harness"]["cupti/cold"]
        v = h[i].get("event_median_s") if isinstance(h, list) else None
        row += f"{v * 1e6:11.3f}" if v else f"{'-':>11s}"
        print(row)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.exit(worker(*sys.argv[2:6]))
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")))
