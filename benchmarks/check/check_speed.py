"""`cudalens check` against the compiler, side by side in one run, on public repositories of three shapes
(issue #29): plain nvcc of each unit in turn, `check -j 1` cold, `check -j N` cold, and warm (nothing
changed, the cache of the -j N run).

    python benchmarks/check/check_speed.py --prepare            # export the sources (once) from the fetched mirrors
    python benchmarks/check/check_speed.py [--set NAME ...] [--limit K] [-j N] [--rounds R] [--profile K] [-o RESULT.json]

Sets (the sources stay outside the repository, under --sources, default /work/ext/check_speed):

- ``llmc``: karpathy/llm.c ``dev/cuda`` (one kernel family per unit, a shared ``common.h``);
- ``samples``: NVIDIA/cuda-samples, ``Samples/0_Introduction`` and ``2_Concepts_and_Techniques``
  (many small programs, helper headers in ``Common``);
- ``thrust``: NVIDIA/thrust ``examples`` (every unit heavy in Thrust/CUB templates; the toolkit's
  own Thrust and CUB are used, as a user's build would).

The units of a set are its ``.cu`` files (sorted; ``--limit K``: the first K); ``check`` is given exactly
those files and the same ``-I`` folders as nvcc, ``--no-config``, ``--format json`` to a file. Each
``check`` runs in a fresh process; the cold runs start from an empty cache folder. The result keeps
every time, the ratios the issue's acceptance names (cold -j 1 / nvcc, -j 1 / -j N, warm), the load
average before and after each set (other jobs share the machine: say so next to the numbers) and
whether the warm findings equal the cold ones.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIRRORS = Path("/work/.mirror")
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hxx", ".inl", ".inc", ".c", ".cc", ".cpp", ".cxx")
SETS: dict[str, dict[str, object]] = {
    "llmc": {"repo": "karpathy/llm.c", "paths": ["dev/cuda"], "include": ["dev/cuda"]},
    "samples": {"repo": "NVIDIA/cuda-samples", "paths": ["Samples/0_Introduction", "Samples/2_Concepts_and_Techniques"],
                "include": ["Common"], "also": ["Common"]},
    "thrust": {"repo": "NVIDIA/thrust", "paths": ["examples"], "include": [], "skip": ["cmake/", "cpp_integration/"]},
}


def one_set_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of the scripts that measure one set's units: --sources, --set (as ``name``), --limit,
    --include (the -I folders, repeatable) and --cc."""
    ap.add_argument("--sources", type=Path, default=Path("/work/ext/check_speed"))
    ap.add_argument("--set", dest="name", choices=sorted(SETS), required=True)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--cc", default="9.0")


def write_result(result: dict, output: Path | None, indent: int = 2) -> int:
    """Print ``result`` as JSON, and write it to ``output`` as well where one is given; exit status 0.
    (The tail of every benchmarks/check script that writes a JSON result.)"""
    text = json.dumps(result, indent=indent)
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text + "\n")
    print(text)
    return 0


def prepare(sources: Path) -> None:
    """Export each set's folders from the fetched bare mirror (``fetch github:OWNER/NAME``)."""
    for name, spec in SETS.items():
        dest = sources / name
        if dest.exists():
            continue
        git_dir = MIRRORS / str(spec["repo"]).replace("/", "+") / "repo"
        dest.mkdir(parents=True)
        folders = [*spec["paths"], *spec.get("also", [])]  # type: ignore[misc]
        listed = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", "HEAD", *folders],
                                capture_output=True, text=True, check=True).stdout.split("\n")
        paths = [p for p in listed if p.endswith(SOURCE_SUFFIXES)]  # the mirror may lack large documents
        with tempfile.TemporaryFile() as fh:
            subprocess.run(["git", "--git-dir", str(git_dir), "archive", "HEAD", *paths], stdout=fh, check=True)
            fh.seek(0)
            with tarfile.open(fileobj=fh) as tar:
                tar.extractall(dest, filter="data")


def units(sources: Path, name: str, limit: int | None) -> list[Path]:
    spec = SETS[name]
    found: list[Path] = []
    for sub in spec["paths"]:  # type: ignore[attr-defined]
        found += sorted((sources / name / sub).rglob("*.cu"))
    skip = tuple(spec.get("skip", ()))  # type: ignore[arg-type]
    found = [f for f in found if not any(s in str(f.relative_to(sources / name)) for s in skip)]
    return found[:limit] if limit else found


#: the first failing plain nvcc of a run: its command and the end of its messages (why a set's nvcc column failed)
NVCC_FAILURES: list[dict[str, str]] = []


def nvcc_each(files: list[Path], includes: list[str], cc: str) -> tuple[float, int]:
    """Plain nvcc of each unit in turn (the compile check makes: one cubin with line info); (s, failures)."""
    arch = "sm_" + cc.replace(".", "")
    failed = 0
    CPU["last"] = _children_cpu()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="check-speed-nvcc-") as tmp:
        for f in files:
            cmd = ["nvcc", f"-arch={arch}", "-cubin", "-lineinfo", *(f"-I{os.path.abspath(i)}" for i in includes),
                   "-o", os.path.join(tmp, "out.cubin"), str(f.resolve())]  # absolute: it runs in the unit's folder
            proc = subprocess.run(cmd, cwd=f.parent, capture_output=True, text=True, check=False)
            failed += proc.returncode != 0
            if proc.returncode != 0 and not NVCC_FAILURES:
                NVCC_FAILURES.append({"command": " ".join(cmd), "stderr_tail": (proc.stderr or proc.stdout)[-800:]})
    seconds = time.perf_counter() - t0
    CPU["last"] = _children_cpu() - CPU["last"]
    return seconds, failed


def code_digest(src: Path) -> str:
    """sha256 of the cudalens sources that ran (each module's path and bytes, in path order): which code a
    result is of, also where the checkout's git metadata did not travel (a device machine's copy)."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted((src / "cudalens").rglob("*.py")):
        h.update(f"\0{f.relative_to(src)}\0".encode() + f.read_bytes())
    return h.hexdigest()


#: CPU seconds (user + system, every process the last timed command started) of the last nvcc_each or check
CPU: dict[str, float] = {"last": 0.0}


def _children_cpu() -> float:
    """User and system seconds of the waited-for child processes so far (with their own children):
    on a loaded machine a steadier measure of the work than the wall time."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def check(files: list[Path], includes: list[str], jobs: int, cache: Path, cc: str,
          fmt: str = "json", src: str | None = None) -> tuple[float, dict]:
    """Seconds of one ``check`` (a fresh process) and its JSON report ({} for another ``fmt``, such as
    the default text a pre-commit hook prints). ``src``: the cudalens of another checkout's ``src``."""
    with tempfile.TemporaryDirectory(prefix="check-speed-") as tmp:
        out = Path(tmp) / "out.json"
        env = dict(os.environ, CUDALENS_CACHE_DIR=str(cache))
        env.pop("CUDALENS_NO_CACHE", None)
        if src is not None:
            env["PYTHONPATH"] = src
        cmd = [sys.executable, "-m", "cudalens", "check", *map(str, files), *(f"-I{i}" for i in includes),
               "-j", str(jobs), "--cc", cc, "--format", fmt, "-o", str(out), "--no-config"]
        cpu0 = _children_cpu()
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        seconds = time.perf_counter() - t0
        CPU["last"] = _children_cpu() - cpu0
        if proc.returncode not in (0, 1, 2) or not out.exists():
            raise SystemExit(f"check failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return seconds, json.loads(out.read_text()) if fmt == "json" else {}


def one_set(sources: Path, name: str, limit: int | None, jobs: int, cc: str, profile: int = 0, rounds: int = 1) -> dict:
    """nvcc alone, ``check -j 1`` cold and ``check -j jobs`` cold, ``rounds`` times, the order reversed every
    other round (so that a machine slowing down or speeding up over the run weighs on each alike); then warm
    (json and text) from the last cold ``-j jobs`` run's cache. ``seconds`` holds each measure's least over the
    rounds (the run least disturbed by other jobs), ``rounds`` every run, ``ratios`` those of the least
    seconds and ``ratios_per_round`` each round's own."""
    files = units(sources, name, limit)
    includes = [str(sources / name / i) for i in SETS[name]["include"]]  # type: ignore[attr-defined]
    load_before = os.getloadavg()
    cold_jn = f"check_j{jobs}_cold"
    runs: list[dict[str, dict[str, float]]] = []
    nvcc_failed, j1, jn = 0, {}, {}
    with tempfile.TemporaryDirectory(prefix="check-speed-cache-") as tmp:
        for r in range(rounds):
            row: dict[str, dict[str, float]] = {}
            for what in ("nvcc_each", "check_j1_cold", cold_jn)[::1 if r % 2 == 0 else -1]:
                if what == "nvcc_each":
                    seconds, nvcc_failed = nvcc_each(files, includes, cc)
                else:
                    shutil.rmtree(Path(tmp) / what, ignore_errors=True)  # cold: an empty cache folder
                    seconds, report = check(files, includes, 1 if what == "check_j1_cold" else jobs,
                                            Path(tmp) / what, cc)
                    j1, jn = (report, jn) if what == "check_j1_cold" else (j1, report)
                row[what] = {"seconds": round(seconds, 2), "cpu_seconds": round(CPU["last"], 2)}
            runs.append(row)
        warm_s, warm = check(files, includes, jobs, Path(tmp) / cold_jn, cc)
        warm_text_s, _ = check(files, includes, jobs, Path(tmp) / cold_jn, cc, "text")
    load_after = os.getloadavg()
    least = {k: min(r[k]["seconds"] for r in runs) for k in runs[0]}
    cpu = {k: min(r[k]["cpu_seconds"] for r in runs) for k in runs[0]}
    extra = {}
    if profile:
        from _check_profile import profile_units

        extra["profile"] = profile_units(files[:profile], includes, cc)
        extra["profile"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]

    def ratios(sec: dict[str, float], cpus: dict[str, float]) -> dict[str, float]:
        return {"check_j1_cold_over_nvcc": round(sec["check_j1_cold"] / sec["nvcc_each"], 3),
                "cpu_check_j1_cold_over_nvcc": round(cpus["check_j1_cold"] / max(cpus["nvcc_each"], 1e-9), 3),
                f"check_j1_over_j{jobs}": round(sec["check_j1_cold"] / sec[cold_jn], 3)}

    return {**extra,
        "repository": SETS[name]["repo"], "paths": SETS[name]["paths"], "units": len(files),
        "files": [str(f.relative_to(sources / name)) for f in files],
        "nvcc_failed": nvcc_failed, "nvcc_first_failure": NVCC_FAILURES[:1], "check_compile_errors": sum(1 for f in j1["files"] if f["compile_error"]),
        "check_not_analyzed": len(j1.get("failed", [])),
        "seconds": {**least, f"check_j{jobs}_warm": round(warm_s, 2), f"check_j{jobs}_warm_text": round(warm_text_s, 2)},
        "cpu_seconds": cpu,
        "rounds": runs,
        "ratios": {**ratios(least, cpu), "warm_seconds_per_unit": round(warm_s / max(1, len(files)), 3)},
        "ratios_per_round": [ratios({k: v["seconds"] for k, v in r.items()}, {k: v["cpu_seconds"] for k, v in r.items()})
                             for r in runs],
        "findings": len(j1["findings"]),
        "findings_j1_equal_jn": j1["findings"] == jn["findings"],
        "findings_warm_equal_cold": warm["findings"] == jn["findings"] and warm["files"] == jn["files"],
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
    }


def against(sources: Path, name: str, limit: int | None, cc: str, baseline: str) -> dict:
    """The same units under this checkout and ``baseline`` (another checkout's ``src``), alternating:
    nvcc alone, ``check -j 1`` cold and warm (json and text) with each, wall and CPU seconds (the CPU
    seconds hold better than the wall time on a machine other jobs share)."""
    files = units(sources, name, limit)
    includes = [str(sources / name / i) for i in SETS[name]["include"]]  # type: ignore[attr-defined]
    out: dict = {"units": len(files), "load_average_before": [round(x, 2) for x in os.getloadavg()]}
    nvcc_s, failed = nvcc_each(files, includes, cc)
    CPU["nvcc"] = CPU["last"]
    out["nvcc_each"] = {"seconds": round(nvcc_s, 2), "cpu_seconds": round(CPU["nvcc"], 2), "failed": failed}
    cold: dict[str, dict] = {}
    for label, src in (("baseline", baseline), ("this", None)):
        with tempfile.TemporaryDirectory(prefix="check-speed-against-") as tmp:
            row: dict = {}
            for run, fmt in (("cold_j1", "json"), ("warm_j1", "json"), ("warm_j1_text", "text")):
                seconds, report = check(files, includes, 1, Path(tmp) / "c", cc, fmt, src)
                row[run] = {"seconds": round(seconds, 2), "cpu_seconds": round(CPU["last"], 2)}
                if run == "cold_j1":
                    cold[label] = report
                if report:
                    row[run]["findings"] = len(report["findings"])
                    row[run]["compile_errors"] = sum(1 for f in report["files"] if f["compile_error"])
        row["cold_over_nvcc"] = round(row["cold_j1"]["seconds"] / nvcc_s, 3)
        row["cold_cpu_over_nvcc_cpu"] = round(row["cold_j1"]["cpu_seconds"] / max(CPU["nvcc"], 1e-9), 3)
        out[label] = row
    out["findings_equal_baseline"] = all(cold["baseline"].get(k) == cold["this"].get(k) for k in ("findings", "files"))
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def tree_warm(sources: Path, size: int, jobs: int, cc: str) -> dict:
    """A warm ``check`` of an unchanged tree of ``size`` units (issue #29: under 2 s for 200): every
    cuda-samples unit under ``samples/Samples``, then llm.c's and Thrust's, up to ``size``; checked
    cold with ``-j jobs`` (fills the cache), then again with nothing changed (timed)."""
    files = sorted((sources / "samples" / "Samples").rglob("*.cu")) + units(sources, "llmc", None) + \
        units(sources, "thrust", None)
    files = files[:size]
    includes = [str(sources / "samples" / "Common"), str(sources / "llmc" / "dev" / "cuda")]
    with tempfile.TemporaryDirectory(prefix="check-speed-tree-") as tmp:
        cold_s, cold = check(files, includes, jobs, Path(tmp) / "c", cc)
        warm_s, warm = check(files, includes, jobs, Path(tmp) / "c", cc)
        warm1_s, _ = check(files, includes, 1, Path(tmp) / "c", cc)
        text_s, _ = check(files, includes, jobs, Path(tmp) / "c", cc, "text")  # what a pre-commit hook prints
    return {"units": len(files), "jobs": jobs, "seconds": {"cold": round(cold_s, 2), f"warm_j{jobs}": round(warm_s, 2),
                                                          "warm_j1": round(warm1_s, 2), f"warm_j{jobs}_text": round(text_s, 2)},
            "format": "warm_j*: --format json -o FILE (the whole analysis rendered); *_text: the default text format",
            "compile_errors": sum(1 for f in cold["files"] if f["compile_error"]),
            "findings_warm_equal_cold": warm["findings"] == cold["findings"] and warm["files"] == cold["files"],
            "note": "units whose compile failed are cached too (with the places their missing header would be found)",
            "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prepare", action="store_true", help="export the sources from the fetched mirrors and stop")
    ap.add_argument("--sources", type=Path, default=Path("/work/ext/check_speed"))
    ap.add_argument("--set", dest="sets", action="append", choices=sorted(SETS), default=None)
    ap.add_argument("--limit", type=int, default=None, help="the first K units of each set")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--cc", default="9.0")
    ap.add_argument("--profile", type=int, default=0, metavar="K",
                    help="also profile the first K units of each set in process (where the time beyond nvcc goes)")
    ap.add_argument("-o", "--output", type=Path, default=None)
    ap.add_argument("--against", default=None, metavar="SRC",
                    help="instead of the sets: each set's units with this checkout and with SRC (another "
                         "checkout's src folder), -j 1 cold and warm (against)")
    ap.add_argument("--include", action="append", default=[], metavar="DIR",
                    help="a further -I folder for every set (e.g. a cuBLAS include folder)")
    ap.add_argument("--rounds", type=int, default=1, metavar="R",
                    help="the sets' cold runs (nvcc, check -j 1, check -j N) R times, alternating order; each "
                         "measure's least is reported beside every run (one_set)")
    ap.add_argument("--tree", type=int, default=0, metavar="N",
                    help="instead of the sets: a warm check of an unchanged tree of N units (tree_warm)")
    args = ap.parse_args()
    if args.prepare:
        prepare(args.sources)
        return 0
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    result = {
        "command": " ".join(["python", "benchmarks/check/check_speed.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0)), "platform": platform.platform(), "python": platform.python_version(),
                    "nvcc": nvcc.splitlines()[-1] if nvcc else None},
        "jobs": args.jobs,
        "code": code_digest(Path(args.against) if args.against else Path(__file__).resolve().parents[2] / "src"),
    }
    for name in SETS:  # further -I folders, for nvcc and check alike
        SETS[name]["include"] = [*SETS[name]["include"], *args.include]  # type: ignore[misc]
    if args.against:
        result["against"] = {name: against(args.sources, name, args.limit, args.cc, args.against)
                             for name in (args.sets or SETS)}
    elif args.tree:
        result["tree"] = tree_warm(args.sources, args.tree, args.jobs, args.cc)
    else:
        result["sets"] = {name: one_set(args.sources, name, args.limit, args.jobs, args.cc, args.profile, args.rounds)
                          for name in (args.sets or SETS)}
    return write_result(result, args.output, indent=2)


if __name__ == "__main__":
    sys.exit(main())
