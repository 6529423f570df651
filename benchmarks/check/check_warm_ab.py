"""Warm `check` of an unchanged tree under two checkouts, alternated (issue #29: under 2 s for 200 units).

    python benchmarks/check/check_warm_ab.py --files LIST --a SRC_A --b SRC_B [--cache-a DIR] [--cache-b DIR]
        [--rounds K] [-j N] [-I DIR ...] [-o RESULT.json]

``LIST`` names the units, one a line (e.g. the 200 that ``check_speed.py --tree 200`` takes). Each
checkout (a ``src`` folder) gets its own cache folder, filled first by a cold ``check`` if it holds no
analyses (the compile entries may be copied in beforehand to spare nvcc). Then K rounds, the two
checkouts alternated within each: a warm ``check --format text`` (the default, what a pre-commit hook
prints) and a warm ``--format json -o FILE``, each a fresh process. Kept: wall seconds, CPU seconds
(user + system of the process and its workers: steadier than the wall on a machine other jobs share),
the load average around each round, and whether the two checkouts wrote the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_speed as cs  # noqa: E402


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(src: str, cache: str, files: list[str], includes: list[str], jobs: int, fmt: str) -> dict:
    """One ``check`` in a fresh process: wall and CPU seconds, the digest of what it wrote."""
    with tempfile.TemporaryDirectory(prefix="check-warm-ab-") as tmp:
        out = Path(tmp) / f"out.{fmt}"
        env = dict(os.environ, PYTHONPATH=src, CUDALENS_CACHE_DIR=cache)
        env.pop("CUDALENS_NO_CACHE", None)
        cmd = [sys.executable, "-m", "cudalens", "check", *files, *(f"-I{i}" for i in includes), "-j", str(jobs),
               "--cc", "9.0", "--format", fmt, "--no-config", "-o", str(out)]
        cpu0, t0 = _cpu(), time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
        if proc.returncode not in (0, 1, 2) or not out.exists():
            raise SystemExit(f"check failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return {"seconds": round(wall, 3), "cpu_seconds": round(cpu, 3),
                "sha256": hashlib.sha256(out.read_bytes()).hexdigest()[:16]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=Path, required=True)
    ap.add_argument("--a", required=True, help="the baseline checkout's src folder")
    ap.add_argument("--b", required=True, help="the checkout measured against it (its src folder)")
    ap.add_argument("--cache-a", default=None)
    ap.add_argument("--cache-b", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("-o", "--output", type=Path, default=None)
    args = ap.parse_args()
    files = [ln.strip() for ln in args.files.read_text().splitlines() if ln.strip()]
    caches = {"a": args.cache_a or tempfile.mkdtemp(prefix="check-warm-a-"),
              "b": args.cache_b or tempfile.mkdtemp(prefix="check-warm-b-")}
    srcs = {"a": args.a, "b": args.b}
    result: dict = {"command": " ".join(["python", "benchmarks/check/check_warm_ab.py", *sys.argv[1:]]),
                    "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "units": len(files),
                    "jobs": args.jobs, "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                                   "python": platform.python_version()},
                    "cold": {}, "rounds": []}
    for k in ("a", "b"):
        if not any((Path(caches[k]) / "results").glob("*/*")):
            result["cold"][k] = run(srcs[k], caches[k], files, args.includes, args.jobs, "json")
    for _ in range(args.rounds):
        row: dict = {"load_average_before": [round(x, 2) for x in os.getloadavg()]}
        for k in ("a", "b"):
            row[k] = {fmt: run(srcs[k], caches[k], files, args.includes, args.jobs, fmt) for fmt in ("text", "json")}
        row["same_output"] = all(row["a"][f]["sha256"] == row["b"][f]["sha256"] for f in ("text", "json"))
        result["rounds"].append(row)
    result["median"] = {k: {f: {m: statistics.median(r[k][f][m] for r in result["rounds"])
                                for m in ("seconds", "cpu_seconds")} for f in ("text", "json")} for k in ("a", "b")}
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return cs.write_result(result, args.output, indent=2)


if __name__ == "__main__":
    sys.exit(main())
