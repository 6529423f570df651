"""After the rules: what a user asked to see.

:func:`triage` applies, in order, the rule selection (``--select``/``--ignore`` and the config's
``select``/``ignore``), the suppression comments of each file (:mod:`.suppress`), a baseline
(:mod:`.baseline`), a minimum priority and a minimum impact, and locates each kept finding's column. Nothing is
dropped silently: every finding left out is counted under its reason in :attr:`Triaged.suppressed`.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cudalens.findings import Evidence, Finding, Layer, Priority
from cudalens.triage.baseline import Baseline, fingerprint
from cudalens.triage.select import selected
from cudalens.triage.suppress import Suppressions, parse_suppressions

REASONS = ("ignored", "comment", "file-comment", "baseline", "min-priority", "min-impact", "duplicate")


@dataclass(frozen=True)
class TriageOptions:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    baseline: Baseline | None = None
    min_impact: float | None = None  # findings with a known score below this are left out
    min_priority: Priority | None = None  # findings below this guide priority are left out


@dataclass(frozen=True)
class Triaged:
    kept: tuple[Finding, ...]
    suppressed: dict[str, int] = field(default_factory=dict)  # reason -> count

    @property
    def suppressed_total(self) -> int:
        return sum(self.suppressed.values())

    def summary(self) -> str:
        """"3 suppressed (2 by comment, 1 by baseline)", or "" when none were."""
        if not self.suppressed_total:
            return ""
        parts = ", ".join(f"{n} by {_WORD[r]}" for r, n in self.suppressed.items() if n)
        return f"{self.suppressed_total} suppressed ({parts})"


_WORD = {"ignored": "--ignore/--select", "comment": "comment", "file-comment": "ignore-file comment",
         "baseline": "baseline", "min-priority": "--min-priority", "min-impact": "--min-impact",
         "duplicate": "duplicate of the kernel's own file"}


class SourceLines:
    """The lines of each file, read once (findings name files; the analysis may hold their text)."""

    def __init__(self, texts: dict[str, str] | None = None) -> None:
        self._texts = dict(texts or {})
        self._lines: dict[str, list[str]] = {}
        self._supp: dict[str, Suppressions] = {}

    def text(self, path: str) -> str:
        if path not in self._texts:
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    self._texts[path] = fh.read()
            except OSError:
                self._texts[path] = ""
        return self._texts[path]

    def line(self, path: str, number: int | None) -> str:
        if path not in self._lines:
            self._lines[path] = self.text(path).splitlines()
        lines = self._lines[path]
        return lines[number - 1] if number and 0 < number <= len(lines) else ""

    def suppressions(self, path: str) -> Suppressions:
        if path not in self._supp:
            self._supp[path] = parse_suppressions(self.text(path))
        return self._supp[path]


_TOKEN = re.compile(r"`([^`]+)`|\b([A-Za-z_]\w*\[[^\]]*\])")


def locate_column(f: Finding, line_text: str) -> int | None:
    """1-based column of the construct a finding names on its line: the first backquoted text or
    array subscript of its message found on the line, else the line's first non-blank character."""
    if not line_text.strip():
        return None
    for m in _TOKEN.finditer(f.message):
        token = m.group(1) or m.group(2)
        for candidate in (token, token.split("(")[0].split("[")[0] + ("[" if m.group(2) else "")):
            at = line_text.find(candidate) if candidate else -1
            if at >= 0:
                return at + 1
    return len(line_text) - len(line_text.lstrip()) + 1


def demangled(name: str | None) -> str | None:
    """A kernel name as a reader writes it: ``_Z7reduce0IfEvPT_S1_j`` -> ``reduce0<float>``
    (Itanium template arguments of builtin types, :func:`cudalens.compiled.names.readable_kernel`);
    a plain name is returned as is."""
    if not name or not name.startswith("_Z"):
        return name
    from cudalens.compiled.names import readable_kernel

    return readable_kernel(name)


def collapse_instantiations(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (rule, kernel, file, line) of a kernel: the instantiations of one template kernel
    (compiled kernels named by their mangled symbol, ``_Z7reduce7IfLj256E...``) and the same
    verdict reached twice for one line (source and compiled layers) are listed once, under the
    demangled name; the first keeps the count of the others as evidence, so nothing is lost."""
    out: list[Finding] = []
    first: dict[tuple, int] = {}
    merged: Counter[int] = Counter()
    for f in findings:
        if not f.kernel:  # host and build findings (Y3 on a binary, copies): each is its own
            out.append(f)
            continue
        name = demangled(f.kernel)
        base = name.split("<")[0] if name else name
        key = (f.rule, base, f.file, f.line)
        if key in first:
            merged[first[key]] += 1
            continue
        first[key] = len(out)
        out.append(dataclasses.replace(f, kernel=name) if name != f.kernel else f)
    for i, n in merged.items():
        out[i] = dataclasses.replace(out[i], evidence=out[i].evidence + (
            Evidence(Layer.COMPILED, "other_instantiations", n),))
    return out


def triage(findings: Iterable[Finding], options: TriageOptions | None = None,
           sources: SourceLines | None = None) -> Triaged:
    """The findings a user asked to see, with columns, and the count of the others by reason."""
    opts = options or TriageOptions()
    src = sources or SourceLines()
    counts: Counter[str] = Counter()
    kept: list[Finding] = []
    for f in collapse_instantiations(findings):
        if not selected(f.rule, opts.select, opts.ignore):
            counts["ignored"] += 1
            continue
        reason = src.suppressions(f.file).suppresses(f.rule, f.line) if f.file else None
        if reason:
            counts[reason] += 1
            continue
        kept.append(f)
    if opts.baseline is not None:
        new, known = opts.baseline.filter([(f, fingerprint(f, src.line(f.file, f.line))) for f in kept])
        counts["baseline"] += len(known)
        kept = new
    if opts.min_priority is not None:
        limit = opts.min_priority.rank
        counts["min-priority"] += sum(1 for f in kept if f.priority.rank > limit)
        kept = [f for f in kept if f.priority.rank <= limit]
    if opts.min_impact is not None:
        low = [f for f in kept if f.score is not None and f.score < opts.min_impact]
        counts["min-impact"] += len(low)
        kept = [f for f in kept if not (f.score is not None and f.score < opts.min_impact)]
    out = []
    for f in kept:
        if f.column is None and f.line:
            col = locate_column(f, src.line(f.file, f.line))
            f = dataclasses.replace(f, column=col) if col else f
        out.append(f)
    return Triaged(tuple(out), {r: counts[r] for r in REASONS if counts[r]})


def fingerprints(findings: Iterable[Finding], sources: SourceLines | None = None) -> list[tuple[Finding, str]]:
    src = sources or SourceLines()
    return [(f, fingerprint(f, src.line(f.file, f.line))) for f in findings]


def triage_analysis(analysis: Any, options: TriageOptions | None = None) -> tuple[Any, Triaged]:
    """``analysis`` (an Analysis of the pipeline) with each file's findings triaged, and the totals."""
    src = SourceLines({fa.model.path: fa.model.text for fa in analysis.files})
    files, kept, counts = [], [], Counter()
    homes: dict[str, set[str]] = {}
    for fa in analysis.files:
        for k in fa.model.kernels:
            homes.setdefault(k.name, set()).add(fa.model.path)

    def base(f: Finding) -> str:
        return (demangled(f.kernel) or "").split("<")[0]

    at_home = {(f.rule, base(f)) for fa in analysis.files for f in fa.findings
               if f.kernel and fa.model.path in homes.get(base(f), ())}
    for fa in analysis.files:
        # a kernel's finding reached again through a header or an including file (header.cuh:1:1):
        # listed once, in the file that defines the kernel
        again = {id(f) for f in fa.findings if f.kernel and fa.model.path not in homes.get(base(f), {fa.model.path})
                 and (f.rule, base(f)) in at_home}
        counts["duplicate"] += len(again)
        t = triage([f for f in fa.findings if id(f) not in again], options, src)
        files.append(dataclasses.replace(fa, findings=t.kept))
        kept.extend(t.kept)
        counts.update(t.suppressed)
    return (dataclasses.replace(analysis, files=tuple(files)),
            Triaged(tuple(kept), {r: counts[r] for r in REASONS if counts[r]}))


