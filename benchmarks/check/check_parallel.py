"""`cudalens check` on a tree, cold, one file at a time (-j 1) against -j N: the speed-up of
compiling in parallel.

    python benchmarks/check/check_parallel.py [TREE] [-j N] [--rounds R] [-o RESULT.json]

Each run is the real command in a fresh process with an empty compile cache (cold: every file is
compiled), ``--format json`` to a file, ``--no-config``. Runs alternate (-j 1, -j N, -j 1, ...)
so that a change in the machine's load affects both; the result keeps every run's wall time, the
medians, their ratio, the load average before and after, and the file count. Default TREE: the
repository's examples/. benchmarks/results/cpu/check_parallel.json is this script's output.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_speed as cs  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def run(tree: Path, jobs: int) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory(prefix="cudalens-bench-") as tmp:
        env = dict(os.environ, CUDALENS_CACHE_DIR=str(Path(tmp) / "cache"))
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, "-m", "cudalens", "check", str(tree), "-j", str(jobs), "--format", "json",
               "-o", str(out), "--no-config"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        seconds = time.perf_counter() - t0
        data = json.loads(out.read_text())
    compiled = sum(1 for f in data["files"] if f["compiled"])
    return seconds, len(data["files"]) + len(data.get("failed", [])), compiled if proc.returncode in (0, 1, 2) else -1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path, nargs="?", default=ROOT / "examples")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-o", "--output", type=Path, default=None)
    args = ap.parse_args()
    load_before = os.getloadavg()
    serial, parallel = [], []
    files = compiled = None
    for _ in range(args.rounds):
        for jobs, bucket in ((1, serial), (args.jobs, parallel)):
            seconds, files, compiled = run(args.tree, jobs)
            bucket.append(round(seconds, 2))
    result = {
        "command": f"python benchmarks/check/check_parallel.py {os.path.relpath(args.tree, ROOT)} -j {args.jobs} "
                   f"--rounds {args.rounds}",
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "host": platform.node(), "cores_available": os.cpu_count(), "jobs": args.jobs,
        "files": files, "compiled": compiled,
        "seconds_j1": serial, f"seconds_j{args.jobs}": parallel,
        "median_j1": statistics.median(serial), f"median_j{args.jobs}": statistics.median(parallel),
        "speedup": round(statistics.median(serial) / statistics.median(parallel), 2),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "note": "cold: each run starts with an empty compile cache; the machine is shared, see the load averages",
    }
    return cs.write_result(result, args.output, indent=2)


if __name__ == "__main__":
    sys.exit(main())
