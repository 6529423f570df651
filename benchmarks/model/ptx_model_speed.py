"""Speed of the compiled (PTX) access model per translation unit, beyond compilation (CPU).

Usage: python3 benchmarks/model/ptx_model_speed.py ROOT OUT.json [--limit N] [--repeat R] [--serial]
  ROOT: the real-world build (benchmarks/realworld/realworld_build.py: PTX of every TU, plan.json).

For each public TU, what ``cudalens analyze`` runs after nvcc, timed: the compiled access layer
(``cudalens.evidence.compiled_access.compiled_access``) on the PTX that compile kept, for the
kernels the file defines (the source model from the front end says which; instantiations of
library templates such as Thrust's are not the file's), with the launch the file gives, on this
machine's cores: one forked worker (``cudalens.evidence.model_workers``) beside this process, as
analyze does (``--serial``: this process alone). Wall seconds, the least of ``--repeat`` runs (the
machine is shared; the least is the run least disturbed), and this process's CPU seconds. The
front end (the source model) and nvcc are not counted: they run with or without the compiled model.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cudalens.access.model import analyze_model
from cudalens.evidence.compiled_access import compiled_access
from cudalens.evidence.model_workers import model_worker
from cudalens.pipeline.defines import compiler_defines
from cudalens.source.limits import Budget
from cudalens.source.parse import parse_file


def main(argv: list[str]) -> int:
    root, out = Path(argv[0]), Path(argv[1])
    limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else None
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 3
    worker = None if "--serial" in argv else model_worker()  # forked first, while one thread runs
    plan = json.loads((root / "plan.json").read_text())
    build = {r["tu"]: r for r in json.loads((root / "build.json").read_text())}
    units = [u for u in plan["units"] if u["project"] != "own"][:limit]
    rows = []
    for u in units:
        budget = Budget()
        model = analyze_model(parse_file(u["source"], (), budget), budget=budget)
        text = (root / u["ptx"]).read_text(errors="replace")
        walls, cpus, evaluated, notes = [], [], 0, []
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            evals, notes = compiled_access(u["source"], model, "9.0", compiler_defines(model, {}),
                                           flags=(), sass_lds=None, ptx=text, worker=worker)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            evaluated = sum(len(v) for v in evals.values())
        rows.append({"tu": u["tu"], "kernels_in_ptx": len(u["kernels"]), "kernels_evaluated": evaluated,
                     "model_seconds": round(min(walls), 3), "model_seconds_runs": [round(w, 3) for w in walls],
                     "this_process_cpu_seconds": round(min(cpus), 3), "notes": notes,
                     "ptx_compile_seconds": build.get(u["tu"], {}).get("ptx_seconds")})
    if worker is not None:
        worker.shutdown()
    walls = sorted(r["model_seconds"] for r in rows)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    summary = {"tus": len(rows), "cores": os.cpu_count(), "workers": 0 if worker is None else 1,
               "repeat": repeat, "load_average": os.getloadavg(),
               "note": "wall seconds of the compiled access layer per unit, the least of the repeats",
               "median_s": round(statistics.median(walls), 3),
               "p90_s": round(walls[int(0.9 * (len(walls) - 1))], 3), "max_s": walls[-1],
               "share_within_1s": round(sum(s <= 1.0 for s in walls) / len(walls), 4),
               "within_1s": sum(s <= 1.0 for s in walls),
               "over_1s": [{"tu": r["tu"], "kernels_evaluated": r["kernels_evaluated"], "s": r["model_seconds"]}
                           for r in sorted(rows, key=lambda r: -r["model_seconds"]) if r["model_seconds"] > 1.0],
               "compile_median_s": statistics.median([r["ptx_compile_seconds"] for r in rows
                                                      if r["ptx_compile_seconds"]] or [0]),
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "code_commit": commit,
               "command": "PYTHONPATH=src python3 benchmarks/model/ptx_model_speed.py " + " ".join(argv)}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "units": rows}, indent=1))
    sys.stdout.write(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
