"""Findings per rule of `cudalens check` over NVIDIA/cuda-samples (code nobody here wrote).

Usage: python3 benchmarks/check/cuda_samples_findings.py [SAMPLES_DIR] [-o OUT.json] [--label before|after]
       [--merge-into FILE] [-- extra check options]
       python3 benchmarks/check/cuda_samples_findings.py --sample 30 --seed 16 --from FILE [--label after]
       python3 benchmarks/check/cuda_samples_findings.py --verdicts VERDICTS.json --from FILE

``--sample`` draws a seeded sample of the label's findings that are not hygiene advice (E6, I17,
Y1, Y2: mechanical facts of the source) for a person to check by reading the code; ``--verdicts``
stores that person's verdicts (one per sampled finding: "TP" or "FP" with a note) in FILE under
``hand_check`` with the precision they give.

Runs the installed `cudalens check SAMPLES_DIR --format json` (a subprocess with an argument list),
counts the findings per rule and per priority, and writes them with the commit of this tree, the
command line and the date. ``--merge-into FILE`` stores the result under ``label`` in FILE, so a
"before" and an "after" run of two versions of cudalens sit side by side in one committed file.
The samples themselves are never copied or committed.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", HERE, "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def count(samples: str, extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "cudalens", "check", samples, "--format", "json", *extra]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.monotonic() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"cudalens check failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    data = json.loads(proc.stdout)
    findings = data["findings"]
    by_rule = collections.Counter(f["rule"] for f in findings)
    by_priority = collections.Counter(f["priority"] for f in findings)
    samples_root = os.path.abspath(samples)
    return {
        "command": ["cudalens", "check", "<cuda-samples>", "--format", "json", *extra],
        "cudalens_commit": _commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": round(elapsed, 1),
        "files": len(data["files"]),
        "files_compiled": sum(1 for f in data["files"] if f.get("compiled")),
        "findings": len(findings),
        "suppressed": data.get("suppressed", {}),
        "by_rule": dict(sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0]))),
        "by_priority": dict(by_priority),
        "findings_list": [
            {"rule": f["rule"], "priority": f["priority"], "kernel": f.get("kernel"),
             "file": os.path.relpath(f["file"], samples_root) if os.path.isabs(f["file"]) else f["file"],
             "line": f.get("line"), "message": f["message"]}
            for f in findings
        ],
    }


HYGIENE = ("E6", "I17", "Y1", "Y2", "Y3", "E10", "I16")


def sample(doc: dict, label: str, n: int, seed: int) -> list[dict]:
    import random

    pool = [f for f in doc[label]["findings_list"] if f["rule"] not in HYGIENE]
    return random.Random(seed).sample(pool, min(n, len(pool)))


def store_verdicts(doc: dict, verdicts: list[dict], label: str, seed: int) -> dict:
    tp = sum(v["verdict"] == "TP" for v in verdicts)
    doc["hand_check"] = {
        "of": label, "seed": seed, "excluded_rules": list(HYGIENE), "sampled": len(verdicts),
        "true_positives": tp, "precision": round(tp / len(verdicts), 3) if verdicts else None,
        "findings": verdicts,
    }
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("samples", nargs="?", default="/work/ext/cuda-samples")
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument("--label", default="after")
    ap.add_argument("--merge-into", default=None)
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--from", dest="source", default=None)
    ap.add_argument("--verdicts", default=None)
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.sample or args.verdicts:
        with open(args.source, encoding="utf-8") as fh:
            doc = json.load(fh)
        if args.sample:
            sys.stdout.write(json.dumps(sample(doc, args.label, args.sample, args.seed), indent=1) + "\n")
            return 0
        with open(args.verdicts, encoding="utf-8") as fh:
            verdicts = json.load(fh)
        with open(args.source, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(store_verdicts(doc, verdicts, args.label, args.seed), indent=1) + "\n")
        return 0
    result = count(args.samples, extra)
    if args.merge_into:
        doc = {}
        if os.path.exists(args.merge_into):
            with open(args.merge_into, encoding="utf-8") as fh:
                doc = json.load(fh)
        doc.setdefault("source", "NVIDIA/cuda-samples (checked out outside the repository; not committed)")
        doc[args.label] = result
        path = args.merge_into
    else:
        doc, path = result, args.output
    text = json.dumps(doc, indent=1) + "\n"
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
