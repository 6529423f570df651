"""tests/realworld/ and tests/projects/ in project form, with default options (CPU, no GPU).

`cudalens check <folder> --format json` with no flag, as a user runs it: the real-world set's kernels
folder as one project, and each project of tests/projects/ from its own folder. Scored as
tests/realworld/evaluate.py scores the per-file analysis (precision, recall, the first-ranked rule
against the `first` label; hygiene and advisory findings judged only for host entries), and the
project corpus with the same counts from its expect.toml labels (tests/projects/corpus.py), plus how
many projects meet every label (findings, figures, launch origin, nothing else at medium or above).

Usage: PYTHONPATH=src python3 benchmarks/realworld/realworld_projects.py [OUT.json]
       (default OUT: benchmarks/results/cpu/realworld_projects.json)
Targets (issue #26): precision >= 0.95 and recall >= 0.90 on tests/realworld in project form.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.projects import corpus  # noqa: E402
from tests.realworld.evaluate import HYGIENE, load_labels  # noqa: E402

KERNELS = ROOT / "tests" / "realworld" / "kernels"
TARGETS = {"precision": 0.95, "recall": 0.90}


def check_json(folder: Path) -> dict:
    """`cudalens check . --format json` in ``folder``, no other flag."""
    proc = subprocess.run([sys.executable, "-m", "cudalens", "check", ".", "--format", "json"], cwd=folder,
                          capture_output=True, text=True, env=os.environ.copy())
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{folder}: cudalens check exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)


def score_realworld(report: dict) -> dict:
    """evaluate.score's counts, from the JSON of one `check` over the kernels folder."""
    by_file: dict[str, list[dict]] = {}
    for f in report["findings"]:  # ranked order
        by_file.setdefault(os.path.basename(f.get("file") or ""), []).append(f)
    tp = fp = expected = found = first_ok = 0
    cases = []
    for c in load_labels():
        findings = by_file.get(c["file"], [])
        if c.get("scope") == "host":
            mine = [f for f in findings if not f.get("kernel")]
        else:
            mine = [f for f in findings if corpus.base_name(f.get("kernel")) == c["kernel"]
                    and f["rule"] not in HYGIENE and not f.get("advisory")]
        tolerated = set(c.get("tolerate", []))
        wanted = {r for e in c["expect"] for r in e.split("|")}
        rules = [f["rule"] for f in mine]
        false_pos = [r for r in rules if r not in wanted and r not in tolerated]
        missed = [e for e in c["expect"] if not set(e.split("|")) & set(rules)]
        judged = [f["rule"] for f in mine if f["rule"] not in tolerated or f["rule"] in wanted]
        top = judged[0] if judged else None
        ok = (top in c["first"]) if c["first"] else top is None
        tp += sum(1 for r in rules if r in wanted)
        fp += len(false_pos)
        expected += len(c["expect"])
        found += len(c["expect"]) - len(missed)
        first_ok += ok
        if false_pos or missed or not ok:
            cases.append({"case": f"{c['file']}:{c['kernel'] or 'host'}", "top": top, "first": c["first"],
                          "false_positives": false_pos, "missed": missed})
    n = len(load_labels())
    return {"cases": n, "precision": _ratio(tp, tp + fp), "recall": _ratio(found, expected),
            "first_fix": _ratio(first_ok, n), "true_positives": tp, "false_positives": fp, "expected": expected,
            "found": found, "first_fix_ok": first_ok, "not_clean": cases}


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 1.0


def count_rules(findings: list[dict], into: dict[str, dict[str, int]]) -> None:
    """Findings per rule and priority (the default output's volume, issue #30)."""
    for f in findings:
        by_priority = into.setdefault(f["rule"], {})
        by_priority[f["priority"]] = by_priority.get(f["priority"], 0) + 1


def score_projects() -> dict:
    total = corpus.Score()
    passing, failing = [], {}
    rules: dict[str, dict[str, int]] = {}
    for project in corpus.projects():
        labels = corpus.load(project)
        report = corpus.run_check(project)
        corpus.score(project, labels, report, total)
        count_rules(report["findings"], rules)
        problems = corpus.judge(project, labels, report).problems()
        if problems:
            failing[project.name] = problems
        else:
            passing.append(project.name)
    return {"projects": len(passing) + len(failing), "meet_every_label": len(passing), "passing": passing,
            "failing": failing, "precision": _ratio(total.true_pos, total.true_pos + total.false_pos),
            "recall": _ratio(total.found, total.expected), "first_fix": _ratio(total.first_ok, total.kernels),
            "kernels": total.kernels, "true_positives": total.true_pos, "false_positives": total.false_pos,
            "expected": total.expected, "found": total.found, "first_fix_ok": total.first_ok,
            "misses": total.misses, "false_alarms": total.false_alarms, "wrong_first": total.wrong_first,
            "findings_by_rule": dict(sorted(rules.items()))}


def commit() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return proc.stdout.strip()


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "benchmarks" / "results" / "cpu" / "realworld_projects.json"
    t0 = time.time()
    report = check_json(KERNELS)
    realworld = score_realworld(report)
    count_rules(report["findings"], realworld.setdefault("findings_by_rule", {}))
    t1 = time.time()
    projects = score_projects()
    t2 = time.time()
    doc = {
        "commit": commit(),
        "command": "cudalens check . --format json (no other flag), in tests/realworld/kernels and in each "
                   "tests/projects/<project>",
        "targets": TARGETS,
        "realworld": {**realworld, "seconds": round(t1 - t0, 1),
                      "meets_targets": realworld["precision"] >= TARGETS["precision"]
                      and realworld["recall"] >= TARGETS["recall"]},
        "projects": {**projects, "seconds": round(t2 - t1, 1)},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    r, p = doc["realworld"], doc["projects"]
    print(f"realworld (project form): precision {r['precision']} recall {r['recall']} first {r['first_fix']} "
          f"({r['cases']} cases)")
    print(f"projects: {p['meet_every_label']}/{p['projects']} meet every label; precision {p['precision']} "
          f"recall {p['recall']} first {p['first_fix']} ({p['kernels']} kernels)")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
