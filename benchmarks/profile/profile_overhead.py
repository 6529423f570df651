"""Overhead of `cudalens profile` (trace mode) on (a), examples/profile/torch_train.py 30: the program
alone against the whole command, alternating which goes first each round.

Usage (repository root, GPU machine): python3 benchmarks/profile/profile_overhead.py OUT.json [--rounds N] [--budget S]

Per run: the process's wall time; the program's own loop time (it prints it); for the command, the
traced program's wall time (the report's ``wall_s``) and so the command's own time outside the
program (start-up before the launch, the report after it). Ratios of medians and of the fastest runs.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_gpu import sh  # noqa: E402


def main() -> int:
    out = sys.argv[1]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 6
    budget = float(sys.argv[sys.argv.index("--budget") + 1]) if "--budget" in sys.argv else 150
    py = sys.executable
    env = {**os.environ, "CUDALENS_NCU": "none", "PYTHONUNBUFFERED": "1"}
    prog = [py, "examples/profile/torch_train.py", "30"]
    cmd = [py, "-m", "cudalens", "profile", "--format", "json", "-o", "/tmp/ovh.json", "--", *prog]
    loop = re.compile(r"steps, last loss [-0-9.]+, ([0-9.]+) s")
    rows: dict[str, list[dict]] = {"alone": [], "profile": []}
    sh(prog, 150, env)  # warm-up: page cache, the driver's first start
    t0 = time.perf_counter()
    for i in range(rounds):
        if time.perf_counter() - t0 > budget:
            break
        for tag in (("alone", "profile") if i % 2 == 0 else ("profile", "alone")):
            rc, txt, dt = sh(prog if tag == "alone" else cmd, 150, env)
            m = loop.search(txt)
            row = {"rc": rc, "wall_s": dt, "loop_s": float(m.group(1)) if m else None}
            if tag == "profile":
                try:
                    with open("/tmp/ovh.json") as fh:
                        rep = json.load(fh)
                    row["traced_program_wall_s"] = rep["wall_s"]
                    row["command_own_s"] = dt - rep["wall_s"]
                    row["findings"] = [f["rule"] for f in rep["findings"]]
                except Exception as exc:  # noqa: BLE001
                    row["error"] = f"{type(exc).__name__}: {exc}"
            rows[tag].append(row)
            print(tag, rc, round(dt, 2), row.get("command_own_s"), flush=True)

    def vals(tag: str, key: str) -> list[float]:
        return [r[key] for r in rows[tag] if r["rc"] == 0 and r.get(key) is not None]

    a, p = vals("alone", "wall_s"), vals("profile", "wall_s")
    summary = {
        "rounds": len(p),
        "wall_ratio_median": statistics.median(p) / statistics.median(a) if a and p else None,
        "wall_ratio_fastest": min(p) / min(a) if a and p else None,
        "paired_ratios": [q / r for q, r in zip(p, a)],
        "loop_ratio_median": (statistics.median(vals("profile", "loop_s")) / statistics.median(vals("alone", "loop_s"))
                              if vals("alone", "loop_s") and vals("profile", "loop_s") else None),
        "traced_program_ratio_median": (statistics.median(vals("profile", "traced_program_wall_s"))
                                        / statistics.median(a) if a and vals("profile", "traced_program_wall_s")
                                        else None),
        "command_own_s_median": statistics.median(vals("profile", "command_own_s")) if p else None,
        "alone_spread_s": (min(a), max(a)) if a else None,
    }
    _, smi, _ = sh(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], 30)
    with open(out, "w") as fh:
        json.dump({"script": "benchmarks/profile/profile_overhead.py", "date_utc": datetime.now(timezone.utc).isoformat(),
                   "device": smi.strip(), "program": prog[1:], "summary": summary, **rows}, fh, indent=2)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
