"""Compare what two versions of cudalens report: rule pages and every finding.

Usage:
    python benchmarks/compare_findings.py BEFORE_ROOT AFTER_ROOT [--ignore-key KEY ...] [--out DIR]
    python benchmarks/compare_findings.py --rev REV_A --rev REV_B   # two commits of this repository

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

REPO = Path(__file__).resolve().parents[1]


def _export(rev: str, dest: Path) -> Path:
    archive = dest / "src.tar"
    with open(archive, "wb") as fh:
        subprocess.run(["git", "-C", str(REPO), "archive", rev], stdout=fh, check=True)
    root = dest / rev.replace("/", "_")
    root.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="data")
    return root


def _run(root: Path, args: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    proc = subprocess.run([sys.executable, "-m", "cudalens", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=1800)
    return proc.stdout if proc.stdout else f"<exit {proc.returncode}> {proc.stderr.strip()[-300:]}"


def collect(root: Path) -> dict[str, str]:
    """Every output, by a name that is the same in both roots."""
    out = {"rules.txt": _run(root, ["rules"]), "rules.json": _run(root, ["rules", "--format", "json"])}
    for row in json.loads(out["rules.json"])["rules"]:
        out[f"rules/{row['id']}"] = _run(root, ["rules", row["id"]])
    out["check-examples.json"] = _run(root, ["check", "examples", "--format", "json"])
    for cu in sorted((root / "tests" / "analyze" / "corpus").glob("*.cu")):
        out[f"corpus/{cu.name}"] = _run(root, ["analyze", str(cu.relative_to(root)), "--format", "json"])
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
        fa = {_key(f): f for f in _findings(ja)}
        fb = {_key(f): f for f in _findings(jb)}
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
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cudalens_compare_") as tmp:
        roots = list(args.roots) + [_export(r, Path(tmp)) for r in args.rev]
        if len(roots) != 2:
            ap.error("give two roots or two --rev")
        before, after = collect(roots[0]), collect(roots[1])
    if args.out:
        for label, outputs in (("before", before), ("after", after)):
            for name, text in outputs.items():
                path = args.out / label / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    diffs = compare(before, after, set(args.ignore_key))
    print("\n".join(diffs) if diffs else "identical")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
