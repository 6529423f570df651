"""Where `check -j 1`'s Python time goes, in every process it runs (issue #29, cold): the parent, the
launch resolution's worker, each file's worker and the report's, each under cProfile.

The compile cache is filled first (one plain ``check`` of the units), and the result cache emptied
before the profiled run: the compiler does not run, so what is left is the Python work of a cold
``check``. Self time (tottime) of every function is summed by the part of the pipeline its file
belongs to (:data:`PARTS`, first match wins), so the parts add up to the profiled total; "waiting"
(sleeps, polls, locks: the parent waiting for its workers) is listed apart. cProfile's overhead
inflates call-heavy parts; compare parts of one run, or two codes profiled alike.

    PYTHONPATH=src python benchmarks/check/check_profile_workers.py --set llmc [--limit K] \\
        [--include DIR] [--src OTHER/src] [--cache DIR] [-o OUT.json]
"""

from __future__ import annotations

import argparse
import glob
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_speed as cs  # noqa: E402

#: (part, substrings of a function's "file:name"), first match wins
PARTS = (
    ("waiting (sleep, poll, locks)", ("time.sleep", "'poll' of", "posix.waitpid", "select.", "_thread.lock")),
    ("imports (each worker's and the parent's)", ("<frozen importlib", "builtins.compile", "marshal.loads", "_imp.",
                                                   "builtins.__import__")),
    ("launch resolution (project/)", ("cudalens/project/",)),
    ("PTX parse", ("cudalens/compiled/ptx",)),
    ("lane machine (access/ptx_*, compiled access, numpy)", ("cudalens/access/ptx_", "cudalens/evidence/compiled_access",
                                                            "cudalens/evidence/model_workers", "numpy")),
    ("front end (tree-sitter parse, syntax walk)", ("tree_sitter", "cudalens/source/parse", "cudalens/source/syntax",
                                                   "cudalens/source/declarations", "cudalens/source/kernel_walk",
                                                   "cudalens/source/detect", "cudalens/source/limits")),
    ("rule Y1's callers (source/callers)", ("cudalens/source/callers",)),
    ("source model (source/, access/ model, expressions)", ("cudalens/source/", "cudalens/access/",
                                                           "cudalens/expressions")),
    ("rules (rules/, triage/, confirm)", ("cudalens/rules/", "cudalens/triage/", "cudalens/pipeline/confirm",
                                          "cudalens/findings", "pkgutil")),
    ("occupancy", ("cudalens/occupancy/",)),
    ("compile cache and driver (compiled/)", ("cudalens/compiled/",)),
    ("serialization (pickle, JSON, report, result cache)", ("pickle", "json", "cudalens/report/",
                                                            "cudalens/pipeline/result_cache")),
    ("join and pipeline (evidence/, pipeline/)", ("cudalens/evidence/", "cudalens/pipeline/")),
)
OTHER = "other (built-ins and the standard library called from the parts above)"

#: the profiled run: cudalens' CLI with each worker (pipeline.isolated._child) under cProfile
RUNNER = r'''
import cProfile, os, sys
out = os.environ["CHECK_PROFILE_DIR"]
import cudalens.pipeline.isolated as iso
real = iso._child
def child(fn, item, out_, stage, memory_mb):
    p = cProfile.Profile()
    p.enable()
    try:
        return real(fn, item, out_, stage, memory_mb)
    finally:
        p.disable()
        p.dump_stats(os.path.join(out, f"worker-{os.getpid()}.prof"))
iso._child = child
sys.argv = ["cudalens", *sys.argv[1:]]
from cudalens.cli import main
prof = cProfile.Profile()
prof.enable()
try:
    main()
except SystemExit:
    pass
finally:
    prof.disable()
    prof.dump_stats(os.path.join(out, "parent.prof"))
'''


def part(where: str) -> str:
    for name, keys in PARTS:
        if any(k in where for k in keys):
            return name
    return OTHER


def breakdown(folder: str) -> dict:
    parts: dict[str, float] = {}
    processes: dict[str, float] = {}
    for f in sorted(glob.glob(os.path.join(folder, "*.prof"))):
        stats = pstats.Stats(f)
        total = 0.0
        for (filename, _line, name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
            key = part(f"{filename}:{name}")
            parts[key] = parts.get(key, 0.0) + tottime
            total += tottime
        processes[Path(f).stem] = total
    busy = sum(v for k, v in parts.items() if not k.startswith("waiting"))
    workers = [v for k, v in processes.items() if k.startswith("worker-")]
    return {"seconds_profiled_busy": round(busy, 2),
            "by_part_seconds": {k: round(v, 2) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])},
            "by_part_share_of_busy": {k: round(v / busy, 3) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])
                                      if not k.startswith("waiting")},
            "processes": {"parent_seconds_with_waiting": round(processes.get("parent", 0.0), 2),
                          "workers": len(workers), "workers_seconds": round(sum(workers), 2),
                          "largest_worker_seconds": round(max(workers, default=0.0), 2)}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cs.one_set_arguments(ap)
    ap.add_argument("--src", default=None, help="profile this checkout's src (default: the cudalens on PYTHONPATH)")
    ap.add_argument("--cache", type=Path, default=None, help="a compile cache folder to keep (default: temporary)")
    ap.add_argument("-o", "--output", type=Path, default=None)
    args = ap.parse_args()
    files = cs.units(args.sources, args.name, args.limit)
    includes = [str(args.sources / args.name / i) for i in cs.SETS[args.name]["include"]] + args.include  # type: ignore[attr-defined]
    src = str(Path(args.src).resolve()) if args.src else None
    with tempfile.TemporaryDirectory(prefix="check-profile-workers-") as tmp:
        cache = args.cache or Path(tmp) / "cache"
        cs.check(files, includes, 1, cache, args.cc, src=src)  # fills the compile cache
        shutil.rmtree(cache / "results", ignore_errors=True)
        folder = os.path.join(tmp, "prof")
        os.mkdir(folder)
        env = dict(os.environ, CUDALENS_CACHE_DIR=str(cache), CHECK_PROFILE_DIR=folder)
        env.pop("CUDALENS_NO_CACHE", None)
        if src is not None:
            env["PYTHONPATH"] = src
        load = os.getloadavg()[0]
        cmd = [sys.executable, "-c", RUNNER, "check", *map(str, files), *(f"-I{i}" for i in includes), "-j", "1",
               "--cc", args.cc, "--format", "json", "-o", os.path.join(tmp, "out.json"), "--no-config",
               "--deadline", "600"]
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        seconds = time.perf_counter() - t0
        result = {"command": " ".join(["python", "benchmarks/check/check_profile_workers.py", *sys.argv[1:]]),
                  "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "set": args.name,
                  "units": len(files), "src": src or "PYTHONPATH", "seconds_profiled_run": round(seconds, 2),
                  "load_average_1min": round(load, 2), **breakdown(folder)}
    return cs.write_result(result, args.output, indent=2)


if __name__ == "__main__":
    sys.exit(main())
