"""Compare what two versions of cudalens report: rule pages and every finding.

Usage:
    python benchmarks/check/compare_findings.py BEFORE_ROOT AFTER_ROOT [--ignore-key KEY ...] [--out DIR]
    python benchmarks/check/compare_findings.py --rev REV_A --rev REV_B   # two commits of this repository
    python benchmarks/check/compare_findings.py --rev REV_A --rev REV_B --inputs ROOT --json OUT.json

``--inputs ROOT`` runs both versions on the same inputs (ROOT's ``examples/`` and corpus, ROOT as the
working directory), so every difference comes from the code; without it each root reads its own.
Each version gets its own empty compile cache (``CUDALENS_CACHE_DIR``), so no version reads what
the other compiled. ``--json`` writes every difference, the finding counts per rule of both
versions, and the commands, for committing under ``benchmarks/results/``.

Each root is a checkout (``src/``, ``examples/``, ``tests/analyze/corpus/``); ``--rev`` exports a
commit with ``git archive`` into a temporary folder. In each, with that root's ``src`` first on
``PYTHONPATH`` and the root as working directory, the script runs ``cudalens rules`` (text and
JSON), ``cudalens rules ID`` for every catalog id, ``cudalens check examples --format json`` and
``cudalens analyze FILE --format json`` for every corpus file; then it compares the outputs and
prints one line per difference (finding keys named with ``--ignore-key`` are dropped first, for
keys a change added on purpose). Exit status 0 when identical, 1 when not. Used for the rule
layout refactoring (issue 15): its commit message states the differences this printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _export(rev: str, dest: Path) -> Path:
    archive = dest / "src.tar"
    with open(archive, "wb") as fh:
        subprocess.run(["git", "-C", str(REPO), "archive", rev], stdout=fh, check=True)
    root = dest / rev.replace("/", "_")
    root.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="data")
    return root


def _run(root: Path, args: list[str], inputs: Path, cache: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "CUDALENS_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-m", "cudalens", *args], cwd=inputs, env=env, capture_output=True,
                          text=True, timeout=1800)
    return proc.stdout if proc.stdout else f"<exit {proc.returncode}> {proc.stderr.strip()[-300:]}"


def collect(root: Path, inputs: Path | None = None, only_check: bool = False) -> dict[str, str]:
    """Every output, by a name that is the same in both roots (``inputs``: where examples and corpus are read)."""
    inputs = inputs or root
    with tempfile.TemporaryDirectory(prefix="cudalens_compare_cache_") as cache:
        def run(args: list[str]) -> str:
            return _run(root, args, inputs, Path(cache))

        out = {"check-examples.json": run(["check", "examples", "--format", "json"])}
        if only_check:
            return out
        out["rules.txt"], out["rules.json"] = run(["rules"]), run(["rules", "--format", "json"])
        for row in json.loads(out["rules.json"])["rules"]:
            out[f"rules/{row['id']}"] = run(["rules", row["id"]])
        for cu in sorted((inputs / "tests" / "analyze" / "corpus").glob("*.cu")):
            out[f"corpus/{cu.name}"] = run(["analyze", str(cu.relative_to(inputs)), "--format", "json"])
    return out


def _strip(value: object, ignore: set[str]) -> object:
    if isinstance(value, dict):
        return {k: _strip(v, ignore) for k, v in value.items() if k not in ignore}
    if isinstance(value, list):
        return [_strip(v, ignore) for v in value]
    return value


def _findings(doc: object) -> list[dict]:
    found: list[dict] = []
    if isinstance(doc, dict):
        if isinstance(doc.get("findings"), list):
            found.extend(f for f in doc["findings"] if isinstance(f, dict) and "rule" in f)
        for key, v in doc.items():
            if key != "findings":
                found.extend(_findings(v))
    elif isinstance(doc, list):
        for v in doc:
            found.extend(_findings(v))
    return found


def _key(f: dict) -> str:
    return f"{f.get('rule')} {f.get('file')}:{f.get('line')} {f.get('kernel')}"


def _keyed(found: list[dict]) -> dict[str, dict]:
    """Findings by key; a second finding of the same rule on the same line and kernel gets '#2'."""
    out: dict[str, dict] = {}
    for f in found:
        k, n = _key(f), 1
        while (k if n == 1 else f"{k} #{n}") in out:
            n += 1
        out[k if n == 1 else f"{k} #{n}"] = f
    return out


def rule_counts(text: str) -> dict[str, int]:
    """Findings per rule in one JSON output ({} when it is not JSON)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return {}
    counts: dict[str, int] = {}
    for f in _findings(doc):
        counts[f["rule"]] = counts.get(f["rule"], 0) + 1
    return dict(sorted(counts.items()))


def compare(before: dict[str, str], after: dict[str, str], ignore: set[str]) -> list[str]:
    diffs = []
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a == b:
            continue
        if a is None or b is None:
            diffs.append(f"{name}: only {'after' if a is None else 'before'}")
            continue
        try:
            ja, jb = json.loads(a), json.loads(b)
        except ValueError:
            diffs.append(f"{name}: text differs")
            continue
        ja, jb = _strip(ja, ignore), _strip(jb, ignore)
        if ja == jb:
            continue
        fa = _keyed(_findings(ja))
        fb = _keyed(_findings(jb))
        for k in sorted(set(fa) - set(fb)):
            diffs.append(f"{name}: finding gone: {k}")
        for k in sorted(set(fb) - set(fa)):
            diffs.append(f"{name}: finding new: {k}")
        for k in sorted(set(fa) & set(fb)):
            if fa[k] != fb[k]:
                changed = sorted(x for x in set(fa[k]) | set(fb[k]) if fa[k].get(x) != fb[k].get(x))
                diffs.append(f"{name}: finding changed ({', '.join(changed)}): {k}"
                             + "".join(f"\n    {x}: {fa[k].get(x)!r} -> {fb[k].get(x)!r}" for x in changed
                                       if x not in ("evidence", "message")))
        if not diffs or not diffs[-1].startswith(name):
            if [f for f in _findings(ja)] == [f for f in _findings(jb)]:
                diffs.append(f"{name}: differs outside the findings")
            else:
                diffs.append(f"{name}: findings reordered")
    return diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="*", type=Path)
    ap.add_argument("--rev", action="append", default=[], help="a commit to export (give two)")
    ap.add_argument("--ignore-key", action="append", default=[], help="a finding/report key to drop before comparing")
    ap.add_argument("--out", type=Path, help="also write every output under DIR/before and DIR/after")
    ap.add_argument("--inputs", type=Path, help="read examples/ and the corpus of this checkout in both versions")
    ap.add_argument("--only-check", action="store_true", help="only `check examples` (no rule pages, no corpus)")
    ap.add_argument("--json", type=Path, help="write the differences and per-rule counts as JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cudalens_compare_") as tmp:
        roots = list(args.roots) + [_export(r, Path(tmp)) for r in args.rev]
        if len(roots) != 2:
            ap.error("give two roots or two --rev")
        inputs = args.inputs.resolve() if args.inputs else None
        before, after = collect(roots[0], inputs, args.only_check), collect(roots[1], inputs, args.only_check)
    if args.out:
        for label, outputs in (("before", before), ("after", after)):
            for name, text in outputs.items():
                path = args.out / label / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    diffs = compare(before, after, set(args.ignore_key))
    if args.json:
        name = "check-examples.json"
        args.json.write_text(json.dumps({
            "before": args.rev[0] if args.rev else str(roots[0]), "after": args.rev[-1] if args.rev else str(roots[1]),
            "inputs": str(args.inputs) if args.inputs else "each version's own", "ignored_keys": args.ignore_key,
            "outputs_compared": len(set(before) | set(after)),
            "check_examples_findings": {"before": rule_counts(before.get(name, "")),
                                        "after": rule_counts(after.get(name, ""))},
            "differences": diffs}, indent=1) + "\n")
    print("\n".join(diffs) if diffs else "identical")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
