"""How long the default `cudalens check` output is, per file, over whole trees (issue #30: "at most
one screen per file of medium and above, plus the collapsed hygiene lines").

Usage (from the repository root)::

    python3 benchmarks/check/quiet_output.py --samples CUDA_SAMPLES [--projects tests/projects] [-j N]
        [--only NAME,...] [--budget SECONDS] [--no-compile] [-o OUT.json]

Units: every sample folder of an export of NVIDIA/cuda-samples (``CUDA_SAMPLES/Samples/<chapter>/<sample>``
holding a ``.cu``/``.cuh`` file; kept outside the repo) and every project of ``tests/projects``. Each
unit is checked the way a user would run it, ``cudalens check UNIT`` with no flags (``-j 1`` added:
``-j N`` of this script runs N units at a time instead; the output does not depend on it), twice:

- the default text output: per file, its lines, its lines of medium-and-above findings, its
  collapsed hygiene lines (``Y1: 75 ...; --show-all lists them``), and ``screens`` = lines /
  :data:`SCREEN`;
- ``--show-all`` (the second run reads the first's result cache): the same, every finding listed.

Per rule, ``before`` counts the lines ``--show-all`` prints for it and ``after`` those the default
prints (a collapsed rule counts one line per file). A file "fits one screen" when its
medium-and-above lines are at most :data:`SCREEN`. ``--budget``: no unit is started after that many
seconds (the ones left are listed under ``not_run``), so a run under a time limit still writes its
results.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCREEN = 50
PRIORITIES = ("high", "medium", "medium-low", "low", "info")
MEDIUM_AND_ABOVE = ("high", "medium")
SOURCES = (".cu", ".cuh")
# "  {line:col:>8}  {speedup:>5} {priority:<10} {rule:<5} {message}" (cli.check.summary_lines)
FINDING = re.compile(r"^  +(?:\d+:\d+|-)  +\S+ (high|medium-low|medium|low|info) +([A-Z]+\d+) ")
COLLAPSED = re.compile(r"^  ([A-Z]+\d+): \d+ .*; --show-all lists them$")
SOURCE_ONLY = re.compile(r"; (\d+) analysed source-only")


def units(samples: str | None, projects: str | None) -> list[tuple[str, str]]:
    """(name, folder) of every unit: cuda-samples' sample folders, then tests/projects' projects."""
    found = []
    for folder in (samples, projects):
        if folder and not os.path.isdir(folder):
            raise SystemExit(f"{folder}: no such folder")
    if samples:
        base = os.path.join(samples, "Samples")
        for chapter in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            if not os.path.isdir(os.path.join(base, chapter)):  # Samples/CMakeLists.txt
                continue
            for sample in sorted(os.listdir(os.path.join(base, chapter))):
                path = os.path.join(base, chapter, sample)
                if os.path.isdir(path) and _has_sources(path):
                    found.append((f"cuda-samples/{chapter}/{sample}", path))
    if projects:
        for name in sorted(os.listdir(projects)):
            path = os.path.join(projects, name)
            if os.path.isdir(path) and _has_sources(path):
                found.append((f"projects/{name}", path))
    return found


def _size(path: str) -> int:
    """Bytes of CUDA source under ``path``: the largest units start first (the run ends sooner)."""
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files
               if f.endswith(SOURCES))


def _has_sources(path: str) -> bool:
    return any(f.endswith(SOURCES) for _, _, files in os.walk(path) for f in files)


def parse_text(text: str) -> dict[str, dict]:
    """Per file block of `cudalens check`'s text output: its lines, finding lines by priority and
    rule, collapsed lines by rule, and the count its header gives."""
    out: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            head = line.rsplit(": ", 1)[0] if ": " in line else ""
            if head.endswith(SOURCES + (".h", ".hpp", ".cuh")):
                current = out.setdefault(head, {"lines": 1, "medium_and_above": 0, "collapsed": 0, "header_findings":
                                                _header_count(line.rsplit(": ", 1)[1]),
                                                "by_rule": collections.Counter(), "by_priority": collections.Counter()})
            else:
                current = None  # the closing "N file(s): ..." line
            continue
        if current is None or not line.strip():
            continue
        current["lines"] += 1
        m = FINDING.match(line)
        c = COLLAPSED.match(line)
        if m:
            current["by_priority"][m.group(1)] += 1
            current["by_rule"][m.group(2)] += 1
            current["medium_and_above"] += m.group(1) in MEDIUM_AND_ABOVE
        elif c:
            current["collapsed"] += 1
            current["by_rule"][c.group(1)] += 1
    return out


def _header_count(tally: str) -> int:
    return sum(int(part.split()[0]) for part in tally.split(", ") if part.split() and part.split()[0].isdigit())


def _check(path: str, extra: list[str]) -> tuple[str, str | None]:
    done = subprocess.run([sys.executable, "-m", "cudalens", "check", path, "-j", "1", *extra],
                          capture_output=True, text=True, timeout=3600)
    if done.returncode not in (0, 1):
        return done.stdout, f"exit {done.returncode}: {done.stderr.strip()[-400:]}"
    return done.stdout, None


def measure(name: str, path: str, extra: list[str]) -> dict:
    t0 = time.monotonic()
    quiet, err_q = _check(path, extra)
    every, err_a = _check(path, [*extra, "--show-all"])
    after, before = parse_text(quiet), parse_text(every)
    files = {}
    for f in sorted(set(after) | set(before)):
        a, b = after.get(f), before.get(f)
        files[os.path.relpath(f, path)] = {
            "lines": a["lines"] if a else 0, "screens": round((a["lines"] if a else 0) / SCREEN, 2),
            "medium_and_above": a["medium_and_above"] if a else 0, "collapsed": a["collapsed"] if a else 0,
            "lines_show_all": b["lines"] if b else 0, "screens_show_all": round((b["lines"] if b else 0) / SCREEN, 2),
            # every finding listed once by --show-all: the header's count must match (the parser's check)
            "findings": b["header_findings"] if b else 0,
            "parsed_consistently": b is None or sum(b["by_priority"].values()) == b["header_findings"],
        }
    summary = next((ln for ln in reversed(quiet.splitlines()) if " file(s): " in ln), "")
    m = SOURCE_ONLY.search(summary)
    return {"unit": name, "seconds": round(time.monotonic() - t0, 1), "errors": [e for e in (err_q, err_a) if e],
            "source_only_files": int(m.group(1)) if m else 0, "files": files,
            # why files were analysed source-only (the compile failure lines of the default output)
            "compile_errors": [ln.strip()[:240] for ln in quiet.splitlines() if "analysed source-only," in ln][:5],
            "by_rule": {r: {"before": sum(b["by_rule"][r] for b in before.values()),
                            "after": sum(a["by_rule"][r] for a in after.values())}
                        for r in sorted({r for x in (*before.values(), *after.values()) for r in x["by_rule"]})}}


def totals(results: list[dict]) -> dict:
    files = [(r["unit"] + "/" + f, v) for r in results for f, v in r["files"].items()]
    rules: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in results:
        for rule, c in r["by_rule"].items():
            rules[rule].update(c)
    return {
        "units": len(results), "files": len(files),
        "lines": sum(v["lines"] for _, v in files), "lines_show_all": sum(v["lines_show_all"] for _, v in files),
        "screens": round(sum(v["lines"] for _, v in files) / SCREEN, 1),
        "screens_show_all": round(sum(v["lines_show_all"] for _, v in files) / SCREEN, 1),
        "max_lines_per_file": max((v["lines"] for _, v in files), default=0),
        "max_medium_and_above_per_file": max((v["medium_and_above"] for _, v in files), default=0),
        "files_over_one_screen_of_medium_and_above": sorted(f for f, v in files if v["medium_and_above"] > SCREEN),
        "files_over_one_screen_of_lines": sorted(f for f, v in files if v["lines"] > SCREEN),
        "files_parsed_inconsistently": sorted(f for f, v in files if not v["parsed_consistently"]),
        "source_only_files": sum(r["source_only_files"] for r in results),
        "units_with_errors": sorted(r["unit"] for r in results if r["errors"]),
        "by_rule": {r: dict(c) for r, c in sorted(rules.items(), key=lambda kv: -kv[1]["before"])},
    }


def toolchain() -> dict:
    """The nvcc (and host compiler) `cudalens check` finds here, from `cudalens doctor` (a run
    without nvcc is source-only: the results say so)."""
    done = subprocess.run([sys.executable, "-m", "cudalens", "doctor", "--format", "json"], capture_output=True,
                          text=True, timeout=300)
    try:
        tc = json.loads(done.stdout)["toolchain"]
    except (ValueError, KeyError):
        return {"error": done.stderr.strip()[-400:]}
    nvcc = (tc.get("tools") or {}).get("nvcc") or {}
    return {"nvcc": nvcc.get("path"), "nvcc_version": nvcc.get("version"), "host_compiler": tc.get("host_compiler")}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default=None, help="an export of NVIDIA/cuda-samples (outside the repo)")
    ap.add_argument("--projects", default=os.path.join(ROOT, "tests", "projects"), help="'' for none")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="units checked at the same time")
    ap.add_argument("--only", default=None, help="comma-separated substrings of unit names")
    ap.add_argument("--budget", type=float, default=None, help="start no unit after this many seconds")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "benchmarks", "results", "cpu", "quiet_output_cuda_samples.json"))
    args = ap.parse_args(argv)
    todo = units(args.samples, args.projects)
    if args.only:
        keys = [k for k in args.only.split(",") if k]
        todo = [u for u in todo if any(k in u[0] for k in keys)]
    todo.sort(key=lambda u: -_size(u[1]))
    extra = ["--no-compile"] if args.no_compile else []
    t0 = time.monotonic()
    results, not_run = [], []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        def start(unit: tuple[str, str]) -> dict | None:
            if args.budget is not None and time.monotonic() - t0 > args.budget:
                not_run.append(unit[0])
                return None
            return measure(unit[0], unit[1], extra)

        for r in pool.map(start, todo):
            if r is not None:
                results.append(r)
                worst = max((v["medium_and_above"] for v in r["files"].values()), default=0)
                print(f"{r['unit']}: {len(r['files'])} file(s), {sum(v['lines'] for v in r['files'].values())} lines "
                      f"({sum(v['lines_show_all'] for v in r['files'].values())} with --show-all), medium+ per file "
                      f"at most {worst}, {r['seconds']} s{'; ERRORS' if r['errors'] else ''}", flush=True)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    groups = {g: totals([r for r in results if r["unit"].startswith(g + "/")]) for g in ("cuda-samples", "projects")}
    doc = {"what": "default `cudalens check UNIT` output per file, and per rule with --show-all (before) against "
                   "the default (after) (issue #30)",
           "screen_lines": SCREEN, "commit": commit, "compiled": not args.no_compile, "jobs": args.jobs,
           "date": datetime.date.today().isoformat(), "wall_seconds": round(time.monotonic() - t0, 1),
           "toolchain": toolchain(),
           "command": "python3 benchmarks/check/quiet_output.py " + " ".join(argv),
           "totals": groups, "not_run": sorted(not_run), "units": sorted(results, key=lambda r: r["unit"])}
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    for g, t in groups.items():
        if t["units"]:
            print(f"{g}: {t['units']} units, {t['files']} files, {t['lines']} lines ({t['screens']} screens; "
                  f"{t['lines_show_all']} with --show-all), medium+ per file at most "
                  f"{t['max_medium_and_above_per_file']}, over one screen: {t['files_over_one_screen_of_medium_and_above']}")
    if not_run:
        print(f"not run (budget): {len(not_run)} units")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
