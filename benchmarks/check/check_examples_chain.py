"""`cudalens check examples` at a chain of commits on the same inputs: which commit changed which finding.

Usage:
    python benchmarks/check/check_examples_chain.py REV1 REV2 ... [--inputs DIR] [--json OUT.json] [--outputs DIR]

``--outputs DIR`` keeps each version's JSON as ``DIR/REV.json``; a file already there is read
instead of running that version again (the JSON says which were read), so a long chain can be
resumed or extended on a loaded machine.

Each commit is exported with ``git archive`` and runs ``cudalens check examples --format json`` with
its own ``src`` first on ``PYTHONPATH``, an empty compile cache of its own, and ``DIR`` (default: this
checkout) as the working directory, so every version reads the same ``examples/``. Consecutive
versions are compared finding by finding (:func:`compare_findings.compare`); the JSON holds, per
interval, the findings gone and new and the fields changed, counted by rule, and every difference
line, plus the findings per rule of each version. Used for issue 15's acceptance (the JSON of
``check examples`` before and after the one-rule-one-file restructuring, apart from intended fixes):
``benchmarks/results/cpu/check_examples_before_after.md`` names the commit behind each difference.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_findings as cf  # noqa: E402  (the sibling script)

NAME = "check-examples.json"


def summary(before: str, after: str) -> dict:
    """Findings gone and new, and fields changed, counted by rule; the difference lines."""
    diffs = cf.compare({NAME: before}, {NAME: after}, set())
    a, b = cf._keyed(cf._findings(json.loads(before))), cf._keyed(cf._findings(json.loads(after)))
    gone = collections.Counter(a[k]["rule"] for k in set(a) - set(b))
    new = collections.Counter(b[k]["rule"] for k in set(b) - set(a))
    changed: collections.Counter[str] = collections.Counter()
    for k in set(a) & set(b):
        for field in sorted(set(a[k]) | set(b[k])):
            if a[k].get(field) != b[k].get(field):
                changed[f"{a[k]['rule']} {field}"] += 1
    return {"findings_before": len(a), "findings_after": len(b), "gone_by_rule": dict(sorted(gone.items())),
            "new_by_rule": dict(sorted(new.items())), "changed_fields_by_rule": dict(sorted(changed.items())),
            "differences": diffs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("revs", nargs="+", help="commits, oldest first")
    ap.add_argument("--inputs", type=Path, default=cf.REPO, help="the checkout whose examples/ every version reads")
    ap.add_argument("--json", type=Path, help="write the result here")
    ap.add_argument("--outputs", type=Path, help="keep (and reuse) each version's output as DIR/REV.json")
    args = ap.parse_args(argv)
    inputs = args.inputs.resolve()
    outputs: dict[str, str] = {}
    seconds: dict[str, float] = {}
    reused: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cudalens_chain_") as tmp:
        for rev in args.revs:
            kept = args.outputs / f"{rev}.json" if args.outputs else None
            if kept is not None and kept.is_file():
                outputs[rev] = kept.read_text()
                reused.append(rev)
                continue
            root = cf._export(rev, Path(tmp))
            t0 = time.perf_counter()
            outputs[rev] = cf.collect(root, inputs, only_check=True)[NAME]
            seconds[rev] = round(time.perf_counter() - t0, 1)
            print(f"{rev}: {len(cf._findings(json.loads(outputs[rev])))} findings, {seconds[rev]} s", flush=True)
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_text(outputs[rev])
    commits = {rev: subprocess.run(["git", "-C", str(cf.REPO), "log", "-1", "--format=%H %s", rev],
                                   capture_output=True, text=True, check=True).stdout.strip()[:160]
               for rev in args.revs}
    inputs_rev = subprocess.run(["git", "-C", str(inputs), "rev-parse", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    result = {
        "command": "cudalens check examples --format json",
        "inputs": {"path": str(inputs), "commit": inputs_rev},
        "revisions": commits,
        "seconds": seconds,
        "outputs_read_from": {"dir": str(args.outputs), "revisions": reused} if reused else None,
        "findings_per_rule": {rev: cf.rule_counts(out) for rev, out in outputs.items()},
        "intervals": {f"{a} -> {b}": summary(outputs[a], outputs[b]) for a, b in zip(args.revs, args.revs[1:])},
        "overall": summary(outputs[args.revs[0]], outputs[args.revs[-1]]),
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    for name, s in result["intervals"].items():
        print(f"{name}: gone {s['gone_by_rule']} new {s['new_by_rule']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
