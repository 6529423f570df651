"""One compile per unit (#14): wall time and nvcc calls of `cudalens analyze`, before and after.

Before (a commit given as --before, unpacked read-only with `git archive`): analyze compiled each
unit twice, `nvcc -cubin` for the SASS facts and `nvcc -ptx` for the compiled access model. After
(this tree): one `nvcc -cubin --keep` whose kept PTX feeds the model. Each run is a fresh
process with an empty compile cache (cold); versions alternate, the median of --reps runs is kept.
nvcc calls are counted inside the process (subprocess.run whose program is nvcc: "-cubin" and "-ptx"
are compiles, "other" the toolchain's version probe).

Usage: python3 benchmarks/check/one_compile.py [--before COMMIT] [--reps 3] [-o benchmarks/results/cpu/one_compile.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path("/work/ext/cuda-samples")
UNITS = [
    (str(ROOT / "examples/saxpy.cu"), []),
    (str(ROOT / "examples/access/transpose.cu"), []),
    (str(ROOT / "examples/access/matmul.cu"), []),
    (str(ROOT / "examples/tune/gemm.cu"), []),
    (str(SAMPLES / "Samples/0_Introduction/matrixMul/matrixMul.cu"), ["-I", str(SAMPLES / "Common")]),
    (str(SAMPLES / "Samples/6_Performance/transpose/transpose.cu"), ["-I", str(SAMPLES / "Common")]),
]

#: runs cudalens' CLI in this process, counting the nvcc processes it starts
CHILD = r"""
import json, subprocess, sys, time
calls = []
def wrap(real):
    def run(cmd, *a, **kw):
        if isinstance(cmd, (list, tuple)) and cmd and str(cmd[0]).endswith("/nvcc"):
            calls.append("-ptx" if "-ptx" in cmd else "-cubin" if "-cubin" in cmd else "other")
        return real(cmd, *a, **kw)
    return run
subprocess.run = wrap(subprocess.run)  # cudalens runs nvcc through subprocess.run only
from cudalens.cli import main
t0 = time.perf_counter()
rc = main(sys.argv[1:])
sys.stderr.write("\n@@" + json.dumps({"rc": rc, "nvcc": calls, "inner_s": time.perf_counter() - t0}) + "\n")
"""


def run_once(src: Path, unit: str, flags: list[str], cache: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "CUDALENS_CACHE_DIR": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}
    args = ["analyze", unit, "--format", "json", "-o", os.devnull]
    for i in range(0, len(flags), 2):
        args += ["--include-dir" if flags[i] == "-I" else flags[i], flags[i + 1]]
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True, text=True, timeout=600,
                       check=False)
    wall = time.perf_counter() - t0
    tail = next((ln for ln in reversed(p.stderr.splitlines()) if ln.startswith("@@")), None)
    info = json.loads(tail[2:]) if tail else {"rc": p.returncode, "nvcc": None, "error": p.stderr[-400:]}
    return {"wall_s": round(wall, 3), **info}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="22790e7")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-o", "--output", default=str(ROOT / "benchmarks/results/cpu/one_compile.json"))
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="one-compile-") as tmp:
        before = Path(tmp) / "before"
        before.mkdir()
        data = subprocess.run(["git", "-C", str(ROOT), "archive", a.before, "src"], capture_output=True, check=True).stdout
        tar = Path(tmp) / "before.tar"
        tar.write_bytes(data)
        with tarfile.open(tar) as tf:
            tf.extractall(before)  # noqa: S202 - our own repository's archive
        versions = {"before": before / "src", "after": ROOT / "src"}
        rows = []
        for unit, flags in UNITS:
            if not Path(unit).is_file():
                continue
            runs: dict[str, list[dict]] = {"before": [], "after": []}
            for rep in range(a.reps):
                for name in (("before", "after") if rep % 2 == 0 else ("after", "before")):
                    cache = Path(tmp) / f"cache-{name}-{rep}-{len(rows)}"
                    runs[name].append(run_once(versions[name], unit, flags, cache))
            row = {"unit": os.path.relpath(unit, ROOT) if unit.startswith(str(ROOT)) else unit}
            for name, rs in runs.items():
                row[name] = {"median_wall_s": round(statistics.median(r["wall_s"] for r in rs), 3),
                             "walls_s": [r["wall_s"] for r in rs], "nvcc_calls": rs[0].get("nvcc"),
                             "nvcc_compiles": sum(c in ("-cubin", "-ptx") for c in rs[0].get("nvcc") or ()),
                             "rc": [r.get("rc") for r in rs]}
            row["saved_s"] = round(row["before"]["median_wall_s"] - row["after"]["median_wall_s"], 3)
            rows.append(row)
            sys.stdout.write(json.dumps(row) + "\n")
            sys.stdout.flush()
    out = {"what": "cudalens analyze FILE --format json, cold compile cache, fresh process per run; median of "
                   f"{a.reps} runs, versions alternating",
           "before": a.before, "after": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                                       capture_output=True, text=True).stdout.strip(),
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                       "load_average_at_end": os.getloadavg()},
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "command": "python3 benchmarks/check/one_compile.py " + " ".join(argv),
           "units": rows,
           "total_before_s": round(sum(r["before"]["median_wall_s"] for r in rows), 3),
           "total_after_s": round(sum(r["after"]["median_wall_s"] for r in rows), 3)}
    Path(a.output).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
