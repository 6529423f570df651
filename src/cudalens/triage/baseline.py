"""Baselines: record today's findings so only new ones are reported (``--write-baseline``,
``--baseline FILE``).

A finding's fingerprint is built from what survives unrelated edits: the rule, the kernel, the
file's name (not its directory, so a moved checkout still matches) and the text of the finding's
line with all whitespace removed. Line numbers are not part of it: adding a line above a finding
keeps it in the baseline; editing the flagged line itself makes it new. Identical fingerprints
(the same statement twice in one kernel) are counted, so a third copy of a baselined line is new.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cudalens.findings import Finding

SCHEMA = "cudalens/baseline-1"


def normalized(line_text: str) -> str:
    return "".join(line_text.split())


def fingerprint(f: Finding, line_text: str) -> str:
    """A stable hex digest of (rule, kernel, file name, normalized line text)."""
    key = "\x1f".join([f.rule, f.kernel or "", os.path.basename(f.file or ""), normalized(line_text)])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Baseline:
    counts: dict[str, int]

    def filter(self, findings: Sequence[tuple[Finding, str]]) -> tuple[list[Finding], list[Finding]]:
        """(new, baselined) for findings given with their fingerprints."""
        left = Counter(self.counts)
        new, known = [], []
        for f, fp in findings:
            if left[fp] > 0:
                left[fp] -= 1
                known.append(f)
            else:
                new.append(f)
        return new, known


def baseline_document(fingerprints: Iterable[tuple[Finding, str]]) -> dict:
    """The JSON document of a baseline: the fingerprint counts, and a readable list for review."""
    pairs = list(fingerprints)
    counts = Counter(fp for _, fp in pairs)
    return {
        "schema": SCHEMA,
        "fingerprints": dict(sorted(counts.items())),
        "findings": [{"fingerprint": fp, "rule": f.rule, "kernel": f.kernel, "file": os.path.basename(f.file or ""),
                      "line": f.line, "message": f.message} for f, fp in pairs],
    }


def load_baseline(path: str) -> Baseline:
    """Read a baseline file; a missing or malformed file raises ValueError naming it."""
    from cudalens.textio import load_json

    try:
        doc = load_json(path)
    except ValueError as exc:
        raise ValueError(f"--baseline {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("fingerprints"), dict):
        raise ValueError(f"--baseline {path}: not a cudalens baseline (expected schema {SCHEMA!r}; "
                         "write one with --write-baseline)")
    counts = {}
    for k, v in doc["fingerprints"].items():
        if not isinstance(v, int) or v < 0:
            raise ValueError(f"--baseline {path}: fingerprint {k!r} has count {v!r}, expected a whole number")
        counts[str(k)] = v
    return Baseline(counts)
