"""Speed of the compiled (PTX) access model per translation unit, beyond compilation (CPU).

Usage: python3 benchmarks/ptx_model_speed.py ROOT OUT.json [--limit N]
  ROOT: the real-world build (benchmarks/realworld_build.py: PTX of every TU, plan.json).

For each public TU: parse its PTX and evaluate every kernel as ``cudalens analyze`` does with no
``--define`` (blocks 0 and 1, the launch's block size, scalar parameters unknown, so each tried at
the plausible values; pointers aligned buffers). The nvcc -ptx time measured by the build is listed
beside it. One process, run on this machine's cores (the figure of the issue: <= 1 s per TU on 2).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

from cudalens.access.ptx_eval import evaluate
from cudalens.compiled.ptx import parse_ptx


def main(argv: list[str]) -> int:
    root, out = Path(argv[0]), Path(argv[1])
    limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else None
    plan = json.loads((root / "plan.json").read_text())
    build = {r["tu"]: r for r in json.loads((root / "build.json").read_text())}
    units = [u for u in plan["units"] if u["project"] != "own"][:limit]
    rows = []
    for u in units:
        t0, c0 = time.perf_counter(), time.process_time()
        mod = parse_ptx((root / u["ptx"]).read_text(errors="replace"))
        notes = []
        for k in u["kernels"]:
            fn = mod.function(k["name"])
            try:
                ev = evaluate(mod, fn, tuple(k["block"]), tuple(k["grid"]))
                notes += [n for n in ev.notes if n.startswith("stopped")]
            except Exception as exc:  # noqa: BLE001 - counted, not fatal
                notes.append(f"{type(exc).__name__}")
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        rows.append({"tu": u["tu"], "kernels": len(u["kernels"]), "model_seconds": round(dt, 3),
                     "model_cpu_seconds": round(cpu, 3),
                     "ptx_compile_seconds": build.get(u["tu"], {}).get("ptx_seconds"), "cut": len(notes)})
    secs = sorted(r["model_cpu_seconds"] for r in rows)
    walls = sorted(r["model_seconds"] for r in rows)
    summary = {"tus": len(rows), "cores": os.cpu_count(), "load_average": os.getloadavg(),
               "note": "CPU seconds of the model's process (the machine was shared: wall times in units[])",
               "wall_median_s": round(statistics.median(walls), 3),
               "median_s": round(statistics.median(secs), 3),
               "p90_s": round(secs[int(0.9 * (len(secs) - 1))], 3), "max_s": secs[-1],
               "share_within_1s": round(sum(s <= 1.0 for s in secs) / len(secs), 4),
               "within_1s": sum(s <= 1.0 for s in secs),
               "over_1s": [{"tu": r["tu"], "kernels": r["kernels"], "cpu_s": r["model_cpu_seconds"]}
                           for r in sorted(rows, key=lambda r: -r["model_cpu_seconds"]) if r["model_cpu_seconds"] > 1.0],
               "cpu_s_per_kernel_max": round(max(r["model_cpu_seconds"] / max(r["kernels"], 1) for r in rows), 3),
               "compile_median_s": statistics.median([r["ptx_compile_seconds"] for r in rows
                                                      if r["ptx_compile_seconds"]] or [0]),
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "units": rows}, indent=1))
    sys.stdout.write(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
