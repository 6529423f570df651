"""Score cudalens against the labelled real-world set (labels.toml): precision, recall, first fix.

Used by test_realworld.py; run it as a script to print the per-case table:
    python3 tests/realworld/evaluate.py [--compile]
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "kernels")
#: Hygiene advice judged only for host entries (E6 launch bounds, E10, I16, I17 restrict, Y1-Y3), and
#: any finding its rule declares advisory (L3: a register cliff that costs nothing today).
HYGIENE = frozenset({"E6", "E10", "I16", "I17", "Y1", "Y2", "Y3"})


@dataclass
class CaseResult:
    name: str
    reported: list[str]  # ranked rule ids attributed to the case (hygiene dropped for kernels)
    true_pos: list[str] = field(default_factory=list)
    false_pos: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    top: str | None = None
    first_ok: bool = False


def load_labels() -> list[dict]:
    with open(os.path.join(HERE, "labels.toml"), "rb") as fh:
        return tomllib.load(fh)["case"]


def analyze_set(compile: bool = False):
    from cudalens.pipeline import analyze

    files = sorted({c["file"] for c in load_labels()})
    return analyze([os.path.join(KERNELS, f) for f in files], compile=compile)


def score(analysis) -> tuple[list[CaseResult], dict]:
    cases = load_labels()
    by_file: dict[str, list] = {}
    for fa in analysis.files:
        by_file[os.path.basename(fa.model.path)] = list(fa.findings)  # ranked order
    results = []
    tp = fp = expected = found = first_ok = 0
    for c in cases:
        findings = by_file.get(c["file"], [])
        if c.get("scope") == "host":
            mine = [f for f in findings if not f.kernel]
        else:
            mine = [f for f in findings if f.kernel == c["kernel"] and f.rule not in HYGIENE and not f.advisory]
        tolerated = set(c.get("tolerate", []))
        rules = [f.rule for f in mine]
        r = CaseResult(f"{c['file']}:{c['kernel'] or 'host'}", rules)
        wanted = {rule for e in c["expect"] for rule in e.split("|")}
        for f in mine:
            if f.rule in wanted:
                r.true_pos.append(f.rule)
            elif f.rule not in tolerated:
                r.false_pos.append(f.rule)
        r.missed = [e for e in c["expect"] if not set(e.split("|")) & set(rules)]
        judged = [f for f in mine if f.rule not in tolerated or f.rule in wanted]
        r.top = judged[0].rule if judged else None
        r.first_ok = (r.top in c["first"]) if c["first"] else r.top is None
        tp += len(r.true_pos)
        fp += len(r.false_pos)
        expected += len(c["expect"])
        found += len(c["expect"]) - len(r.missed)
        first_ok += r.first_ok
        results.append(r)
    totals = {
        "cases": len(cases),
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": found / expected if expected else 1.0,
        "first_fix": first_ok / len(cases),
        "true_positives": tp, "false_positives": fp, "expected": expected, "found": found,
    }
    return results, totals


def main(argv: list[str]) -> int:
    results, totals = score(analyze_set(compile="--compile" in argv))
    for r in results:
        flag = "" if (not r.false_pos and not r.missed and r.first_ok) else "  <--"
        print(f"{r.name:<50} top={r.top or '-':<5} fp={','.join(r.false_pos) or '-':<12} "
              f"missed={','.join(r.missed) or '-':<10} all={','.join(r.reported)}{flag}")
    print({k: round(v, 3) if isinstance(v, float) else v for k, v in totals.items()})
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(HERE, "..", "..", "src"))
    raise SystemExit(main(sys.argv[1:]))
