"""How long the default `cudalens check` output is, per file, before and after issue #30's quiet
default (collapsed info hygiene, one finding per rule/kernel/line, demangled names).

Usage: python3 benchmarks/quiet_output.py --before SRC_BEFORE --after SRC_AFTER [--samples DIR]
       [-o benchmarks/results/cpu/quiet_output.json] [--no-compile]

SRC_BEFORE / SRC_AFTER: the ``src`` folders of two versions of cudalens (e.g. ``git archive BASE src``
unpacked outside the repo, and this tree's ``src``). For each target (``examples/`` of this repo and
the cuda-samples folders in :data:`SAMPLES` under ``--samples``, an export of NVIDIA/cuda-samples kept
outside the repo), both versions run ``python -m cudalens check TARGET -I SAMPLES/Common`` twice: the
default text output (lines per file; lines at medium and above; collapsed hygiene lines) and
``--format json`` (findings per rule and priority after triage). A file "fits one screen" when its
block of the text output has at most :data:`SCREEN` lines of medium-and-above findings.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCREEN = 50
SAMPLES = ("Samples/0_Introduction/matrixMul", "Samples/2_Concepts_and_Techniques/reduction",
           "Samples/2_Concepts_and_Techniques/scan", "Samples/2_Concepts_and_Techniques/histogram",
           "Samples/2_Concepts_and_Techniques/convolutionSeparable", "Samples/6_Performance/transpose")
PRIORITIES = ("high", "medium", "medium-low", "low", "info")


def _run(src: str, args: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
    done = subprocess.run([sys.executable, "-m", "cudalens", "check", *args], capture_output=True, text=True,
                          env=env, timeout=3600)
    if done.returncode not in (0, 1):
        raise SystemExit(f"check {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[:400]}")
    return done.stdout


def text_blocks(text: str) -> dict[str, dict[str, int]]:
    """Per file block of the text output: lines, medium-and-above finding lines, collapsed lines."""
    out: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        if not line.startswith("  ") and ": " in line and not line.endswith(" file(s)"):
            head = line.split(": ", 1)[0]
            if head.endswith((".cu", ".cuh", ".h", ".hpp")):
                current = out.setdefault(os.path.relpath(head, ROOT) if head.startswith("/") else head,
                                         {"lines": 1, "medium_and_above": 0, "collapsed": 0})
                continue
        if current is None or not line.startswith("  "):
            continue
        current["lines"] += 1
        words = line.split()
        if "--show-all" in line:
            current["collapsed"] += 1
        elif any(w in ("high", "medium") for w in words[1:3]):
            current["medium_and_above"] += 1
    return out


def per_rule(doc: dict) -> dict[str, dict[str, int]]:
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for f in doc["findings"]:
        counts[f["rule"]][f["priority"]] += 1
    return {r: dict(c) for r, c in sorted(counts.items())}


def measure(src: str, target: str, extra: list[str]) -> dict:
    blocks = text_blocks(_run(src, [target, *extra]))
    doc = json.loads(_run(src, [target, "--format", "json", *extra]))
    rules = per_rule(doc)
    return {
        "files": blocks,
        "findings": sum(sum(c.values()) for c in rules.values()),
        "by_rule": rules,
        "by_priority": {p: sum(c.get(p, 0) for c in rules.values()) for p in PRIORITIES},
        "text_lines": sum(b["lines"] for b in blocks.values()),
        "medium_and_above_lines": sum(b["medium_and_above"] for b in blocks.values()),
        "max_medium_and_above_per_file": max((b["medium_and_above"] for b in blocks.values()), default=0),
        "files_over_one_screen": sorted(f for f, b in blocks.items() if b["medium_and_above"] > SCREEN),
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", default=os.path.join(ROOT, "src"))
    ap.add_argument("--samples", default=None, help="an export of NVIDIA/cuda-samples (outside the repo)")
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "results", "cpu", "quiet_output.json"))
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args(argv)
    targets = [("examples", os.path.join(ROOT, "examples"), [])]
    if args.samples:
        common = ["-I", os.path.join(args.samples, "Common")]
        targets += [(d, os.path.join(args.samples, d), common) for d in SAMPLES
                    if os.path.isdir(os.path.join(args.samples, d))]
    extra = ["--no-compile"] if args.no_compile else ["-j", "2"]
    results = {}
    for name, path, opts in targets:
        results[name] = {label: measure(src, path, opts + extra)
                         for label, src in (("before", args.before), ("after", args.after))}
        b, a = results[name]["before"], results[name]["after"]
        print(f"{name}: findings {b['findings']} -> {a['findings']}, text lines {b['text_lines']} -> "
              f"{a['text_lines']}, max medium+ per file {b['max_medium_and_above_per_file']} -> "
              f"{a['max_medium_and_above_per_file']}")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    doc = {"what": "default `cudalens check` output before/after the quiet default (issue #30)",
           "screen_lines": SCREEN, "commit": commit, "compiled": not args.no_compile,
           "date": datetime.date.today().isoformat(),
           "command": "python3 benchmarks/quiet_output.py --before <base src> --samples <cuda-samples export>",
           "targets": results}
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
