"""Suppression comments, in the manner of ruff's ``# noqa`` and clang-tidy's ``NOLINT``.

``// cudalens: ignore[G8,D1]`` on a finding's line, or alone on the line above it, suppresses
those rules there; ``// cudalens: ignore`` without a list suppresses every rule there.
``// cudalens: ignore-file[SH5]`` anywhere in the file suppresses those rules in the whole file
(``ignore-file`` without a list: all rules). Rule names may be ids (``G8``) or chapter prefixes
(``SH``). Block comments (``/* cudalens: ignore[G8] */``) work the same.

Suppressed findings are never silently lost: :mod:`cudalens.triage` counts them by reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from cudalens.triage.select import matches

_DIRECTIVE = re.compile(r"(?://|/\*)\s*cudalens:\s*(ignore-file|ignore)\b(?:\[([^\]]*)\])?", re.IGNORECASE)
ALL = ("*",)


@dataclass(frozen=True)
class Suppressions:
    """The suppression comments of one file: rules per line, and rules for the whole file."""

    lines: dict[int, tuple[str, ...]] = field(default_factory=dict)  # 1-based line -> rule selectors
    whole_file: tuple[str, ...] = ()
    comment_only_lines: frozenset[int] = frozenset()  # lines holding nothing but the directive

    def suppresses(self, rule: str, line: int | None) -> str | None:
        """The reason ``rule`` at ``line`` is suppressed ("file-comment", "comment") or None."""
        if _hit(rule, self.whole_file):
            return "file-comment"
        if line is None:
            return None
        if _hit(rule, self.lines.get(line, ())):
            return "comment"
        # the line above, when it is a comment line of its own (not a directive of another statement)
        if line - 1 in self.comment_only_lines and _hit(rule, self.lines.get(line - 1, ())):
            return "comment"
        return None


def _hit(rule: str, selectors: tuple[str, ...]) -> bool:
    return bool(selectors) and (selectors == ALL or any(matches(rule, s) for s in selectors))


def _selectors(listed: str | None) -> tuple[str, ...]:
    if listed is None:
        return ALL
    names = tuple(s.strip().upper() for s in listed.split(",") if s.strip())
    return names or ALL


def parse_suppressions(text: str) -> Suppressions:
    """Every ``cudalens: ignore`` directive of ``text``."""
    lines: dict[int, tuple[str, ...]] = {}
    whole: list[str] = []
    comment_only: set[int] = set()
    whole_all = False
    if "cudalens" not in text.lower():  # no directive (most files): no line to look at
        return Suppressions()
    for number, line in enumerate(text.splitlines(), 1):
        if "cudalens" not in line.lower():
            continue
        for m in _DIRECTIVE.finditer(line):
            sel = _selectors(m.group(2))
            if m.group(1).lower() == "ignore-file":
                whole_all = whole_all or sel == ALL
                whole.extend(s for s in sel if s != "*")
            else:
                prev = lines.get(number, ())
                lines[number] = ALL if ALL in (prev, sel) else prev + sel
                if line[:m.start()].strip() == "":
                    comment_only.add(number)
    return Suppressions(lines, ALL if whole_all else tuple(whole), frozenset(comment_only))


@dataclass(frozen=True)
class Directive:
    """One ``cudalens: ignore[...]`` comment: where, which kind, which rule names as written."""

    line: int
    whole_file: bool
    names: tuple[str, ...]  # () for every rule
    alone: bool  # nothing but the comment on its line: it covers the next line too


def directives(text: str) -> list[Directive]:
    """Every suppression comment of ``text``, in order."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if "cudalens" not in line.lower():
            continue
        for m in _DIRECTIVE.finditer(line):
            names = tuple(s.strip().upper() for s in (m.group(2) or "").split(",") if s.strip())
            out.append(Directive(number, m.group(1).lower() == "ignore-file", names, line[:m.start()].strip() == ""))
    return out


def audit(path: str, text: str, findings: Iterable[tuple[str, int | None]], known: Iterable[str]) -> list[str]:
    """Warnings for the suppression comments of one file, as ruff's unused-noqa check gives them:
    a rule name that is no rule or chapter, and a comment that suppresses none of ``findings``
    ((rule, line) of the file's findings before suppression)."""
    from cudalens.triage.select import chapter

    known_ids = {k.upper() for k in known}
    names_ok = known_ids | {chapter(k) for k in known_ids} | {"ALL", "*"}
    found = list(findings)
    warnings = []
    for d in directives(text):
        kind = "ignore-file" if d.whole_file else "ignore"
        comment = f"'cudalens: {kind}" + (f"[{','.join(d.names)}]'" if d.names else "'")
        unknown = [n for n in d.names if n not in names_ok]
        for n in unknown:
            warnings.append(f"{path}:{d.line}: unknown rule {n!r} in the suppression comment {comment}")
        lines = None if d.whole_file else ({d.line, d.line + 1} if d.alone else {d.line})
        hit = any((lines is None or line in lines) and (not d.names or any(matches(rule, n) for n in d.names))
                  for rule, line in found)
        if not hit and len(unknown) < max(1, len(d.names)):
            where = "in this file" if d.whole_file else "on this line" + (" or the next" if d.alone else "")
            warnings.append(f"{path}:{d.line}: unused suppression comment {comment}: no such finding {where}")
    return warnings
