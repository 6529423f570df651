"""The Python CPU `check -j 1` spends per unit beyond the compiler (issue #29, cold), two codes alternated.

Each round runs, for each code (a checkout's ``src``), ``cudalens check UNITS -j 1`` (its result cache emptied) in a fresh
process whose compile cache already holds every unit (filled once, before the rounds, by a first run
of the first code): the compiler and the disassembler are not run, so the CPU seconds (user + system
of the whole process tree) are the Python work of a cold ``check`` (interpreter and imports, project
scan and launch resolution, per-file workers, front end, source model, lane machine, rules,
serialization) plus the compile cache's lookups. The codes alternate within each round (the machine
is shared: CPU seconds hold better than wall time there); the load average is kept per run. Each
run's findings and files are compared with the first code's (``findings_equal``).

    PYTHONPATH=src python benchmarks/check/check_python_cpu.py --set llmc --code before=/tmp/base/src \\
        --code after=src --rounds 3 [--limit K] [--include DIR] [-o OUT.json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_speed as cs  # noqa: E402


def _strip(report: dict) -> dict:
    """The parts of a JSON report that two runs must agree on (the findings and the files' facts)."""
    return {"findings": report.get("findings"), "files": report.get("files"), "failed": report.get("failed")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cs.one_set_arguments(ap)
    ap.add_argument("--code", action="append", required=True, metavar="LABEL=SRC",
                    help="a checkout's src folder under a label (two or more; the first is the reference)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=None, help="a compile cache folder to keep (default: a temporary one)")
    ap.add_argument("-o", "--output", type=Path, default=None)
    args = ap.parse_args()
    codes = [tuple(c.split("=", 1)) for c in args.code]
    files = cs.units(args.sources, args.name, args.limit)
    includes = [str(args.sources / args.name / i) for i in cs.SETS[args.name]["include"]] + args.include  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory(prefix="check-python-cpu-") as tmp:
        cache = args.cache or Path(tmp) / "compiles"
        shutil.rmtree(cache / "results", ignore_errors=True)
        fill_s, _ = cs.check(files, includes, 1, cache, args.cc, src=str(Path(codes[0][1]).resolve()))
        fill_cpu = cs.CPU["last"]
        runs: dict[str, list[dict]] = {label: [] for label, _ in codes}
        reference: dict | None = None
        equal: dict[str, bool] = {label: True for label, _ in codes}
        for _ in range(args.rounds):
            for label, src in codes:
                shutil.rmtree(cache / "results", ignore_errors=True)  # no stored analysis: every file analysed
                load = os.getloadavg()[0]
                seconds, report = cs.check(files, includes, 1, cache, args.cc, src=str(Path(src).resolve()))
                stripped = _strip(report)
                if reference is None:
                    reference = stripped
                equal[label] = equal[label] and stripped == reference
                runs[label].append({"cpu_seconds": round(cs.CPU["last"], 2), "seconds": round(seconds, 2),
                                    "load_average_1min": round(load, 2)})
    n = len(files)
    summary = {}
    for label, rows in runs.items():
        cpu = [r["cpu_seconds"] for r in rows]
        summary[label] = {"cpu_seconds_median": round(statistics.median(cpu), 2), "cpu_seconds_min": min(cpu),
                          "cpu_seconds_per_unit_median": round(statistics.median(cpu) / n, 3),
                          "findings_equal_to_" + codes[0][0]: equal[label]}
    first = summary[codes[0][0]]["cpu_seconds_median"]
    for label, _ in codes[1:]:
        summary[label]["cpu_ratio_to_" + codes[0][0]] = round(summary[label]["cpu_seconds_median"] / first, 3)
    result = {"command": " ".join(["python", "benchmarks/check/check_python_cpu.py", *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "machine": {"cpus": os.cpu_count()}, "set": args.name, "units": n,
              "files": [str(f.relative_to(args.sources / args.name)) for f in files],
              "codes": dict(codes), "fill_run": {"seconds": round(fill_s, 2), "cpu_seconds": round(fill_cpu, 2)},
              "runs": runs, "summary": summary}
    return cs.write_result(result, args.output, indent=2)


if __name__ == "__main__":
    sys.exit(main())
