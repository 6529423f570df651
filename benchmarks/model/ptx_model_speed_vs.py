"""The compiled model's speed, side by side: several checkouts' own ``benchmarks/ptx_model_speed.py``
on the same real-world build, in alternating rounds (CPU).

Usage: python3 benchmarks/model/ptx_model_speed_vs.py OUT.json --code LABEL=DIR [--code LABEL=DIR ...]
           [--root /tmp/m27/speedroot] [--rounds 3] [--repeat 3]
  DIR: a checkout (its src/ and its own benchmarks/ptx_model_speed.py: the modules that script
  imports moved between versions). Each round runs every code once, in the order given, each in a
  fresh process (``--serial``: the model in that process alone), ``--repeat`` times per unit.

OUT.json: ``what``, ``summary`` (:func:`side_by_side`: per code the per-unit least CPU seconds over every round, summed,
and its ratio to the first code's; per round each code's CPU sum over the first code's; where two labels name one
DIR, that A/A pair's ratios: the noise of this machine and method, measured in the same run) and ``runs`` (per code and round: the sum over units of the least wall seconds
of the repeats, the sum of this process's least CPU seconds, kernels evaluated, median, p90 and
max per unit, the load averages before and after, and the seconds per unit), the shape of
benchmarks/results/cpu/ptx_model_speed_vs_7e8b909_2026-11-27.json with CPU seconds added. The
machine may be shared: compare CPU seconds as well as wall, and the rounds' spread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _arg(argv: list[str], name: str, default: str) -> str:
    return argv[argv.index(name) + 1] if name in argv else default


def _script(checkout: Path) -> Path | None:
    """The checkout's own ptx_model_speed.py (benchmarks/model/ since the scripts were grouped)."""
    return next((p for p in (checkout / "benchmarks" / "model" / "ptx_model_speed.py",
                             checkout / "benchmarks" / "ptx_model_speed.py") if p.is_file()), None)


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("--"):
        sys.stderr.write(__doc__ or "")
        return 2
    out = Path(argv[0])
    codes = [argv[k + 1].split("=", 1) for k, a in enumerate(argv) if a == "--code" and k + 1 < len(argv)]
    if not codes or any(len(c) != 2 or _script(Path(c[1])) is None for c in codes):
        sys.stderr.write("ptx_model_speed_vs: give --code LABEL=DIR, DIR a checkout with benchmarks/ptx_model_speed.py\n")
        return 2
    root = Path(_arg(argv, "--root", "/tmp/m27/speedroot")).resolve()
    rounds, repeat = int(_arg(argv, "--rounds", "3")), _arg(argv, "--repeat", "3")
    runs = []
    # each code's own src first; other entries of PYTHONPATH (a folder of installed wheels) are kept,
    # a compared checkout's src is dropped, so no code imports another's modules
    sources = {(Path(d).resolve() / "src") for _, d in codes}
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() not in sources]
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(1, rounds + 1):
            for label, d in codes:
                src = Path(d).resolve()
                res = Path(tmp) / f"{label}_{rnd}.json"
                before = os.getloadavg()
                proc = subprocess.run([sys.executable, str(_script(src)), str(root), str(res),
                                       "--serial", "--repeat", repeat], cwd=src, capture_output=True, text=True,
                                      env={**os.environ, "PYTHONPATH": os.pathsep.join([str(src / "src"), *kept])},
                                      check=False)
                if proc.returncode != 0:
                    sys.stderr.write(f"ptx_model_speed_vs: {label} failed:\n{proc.stderr[-2000:]}\n")
                    return 1
                d_out = json.loads(res.read_text())
                units, summary = d_out["units"], d_out["summary"]
                commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=src, capture_output=True,
                                        text=True, check=False).stdout.strip()
                runs.append({"code": f"{label} {commit}".strip(), "round": rnd,
                             "model_seconds_sum": round(sum(u["model_seconds"] for u in units), 3),
                             "cpu_seconds_sum": round(sum(u["this_process_cpu_seconds"] for u in units), 3),
                             "kernels_evaluated": sum(u["kernels_evaluated"] for u in units),
                             "median_s": summary["median_s"], "p90_s": summary["p90_s"], "max_s": summary["max_s"],
                             "load_average_before": before, "load_average": summary["load_average"],
                             "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                             "per_unit": {u["tu"]: u["model_seconds"] for u in units},
                             "per_unit_cpu": {u["tu"]: u["this_process_cpu_seconds"] for u in units}})
                sys.stdout.write(f"round {rnd} {label}: wall {runs[-1]['model_seconds_sum']} s, "
                                 f"cpu {runs[-1]['cpu_seconds_sum']} s, load {before[0]:.2f}\n")
    what = (f"benchmarks/ptx_model_speed.py {root} OUT --serial --repeat {repeat}, each code with its own copy of the "
            f"script, alternately, {rounds} round(s): " + ", ".join(f"{c[0]}={c[1]}" for c in codes))
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"what": what, "summary": side_by_side(runs, codes), "runs": runs}
    out.write_text(json.dumps(result, indent=1) + "\n")
    sys.stdout.write(json.dumps(result["summary"], indent=1) + "\n")
    return 0


def side_by_side(runs: list[dict], codes: list[list[str]]) -> dict:
    """Per code (by label): the per-unit least CPU seconds over every round, summed (``least_cpu_sum``), and
    its ratio to the first code's; per round, each code's CPU sum over the first code's in that round
    (``round_ratios``). Labels that name the same DIR are an A/A pair: their ratios are the noise."""
    labels = [c[0] for c in codes]
    best: dict[str, dict[str, float]] = {}
    per_round: dict[str, dict[int, float]] = {}
    for r in runs:
        label = r["code"].split(" ")[0]
        units = best.setdefault(label, {})
        for unit, cpu in r["per_unit_cpu"].items():
            units[unit] = min(units.get(unit, cpu), cpu)
        per_round.setdefault(label, {})[r["round"]] = r["cpu_seconds_sum"]
    first = labels[0]
    sums = {label: sum(best[label].values()) for label in labels}
    out: dict = {"first": first, "codes": {}}
    for label in labels:
        ratios = [per_round[label][k] / per_round[first][k] for k in sorted(per_round[first]) if k in per_round[label]]
        out["codes"][label] = {"least_cpu_sum": round(sums[label], 3), "ratio": round(sums[label] / sums[first], 3),
                               "round_ratios": [round(x, 3) for x in ratios]}
    dirs = [Path(c[1]).resolve() for c in codes]
    out["a_a_pairs"] = [[labels[i], labels[j]] for i in range(len(codes)) for j in range(i + 1, len(codes))
                        if dirs[i] == dirs[j]]
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
