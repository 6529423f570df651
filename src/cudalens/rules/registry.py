"""The rule registry: one entry per GUIDE_CATALOG item that has a working detector.

A rule is a function ``check(ctx) -> Iterable[Finding]`` decorated with :func:`rule`. Its docstring
is the rule's documentation page, written in the form of ruff's rule pages:

    What it does / Why it matters / Example / Fix

A rule reads facts only (``ctx``); it never parses, compiles or measures. Missing evidence means
"not established": the rule yields nothing rather than guessing.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable, Iterable

from cudalens.findings import Finding, Priority

Check = Callable[["object"], Iterable[Finding]]


@dataclass(frozen=True)
class RuleSpec:
    id: str
    name: str
    priority: Priority
    section: str
    layers: str
    checks: tuple[Check, ...]
    doc: str

    def check(self, ctx: object) -> list[Finding]:
        """Run every detector of this item."""
        found: list[Finding] = []
        for detector in self.checks:
            found.extend(detector(ctx))
        return found


RULES: dict[str, RuleSpec] = {}


def rule(*, id: str, name: str, priority: Priority, section: str, layers: str) -> Callable[[Check], Check]:
    """Register ``check`` as a detector of catalog item ``id``.

    One item may have several detectors, one per evidence layer (L1 from the source's dynamically
    indexed arrays and from the compiler's stack frame, say). They share the id, priority and section;
    their documentation pages are joined and their findings are all reported.
    """

    def decorate(check: Check) -> Check:
        doc = (check.__doc__ or "").strip()
        for heading in ("What it does", "Why it matters", "Example", "Fix"):
            if heading not in doc:
                raise RuntimeError(f"rule {id}: docstring lacks the section {heading!r}")
        if id in RULES:
            first = RULES[id]
            if (first.priority, first.section) != (priority, section):
                raise RuntimeError(f"rule {id}: detectors disagree on priority or section")
            merged = sorted(set(first.layers.split()) | set(layers.split()), key="SCMRPL".find)
            RULES[id] = RuleSpec(id, first.name, priority, section, " ".join(merged),
                                 first.checks + (check,), first.doc + "\n\n" + doc)
        else:
            RULES[id] = RuleSpec(id, name, priority, section, layers, (check,), doc)
        return check

    return decorate


def load_all() -> dict[str, RuleSpec]:
    """Import every rule module of this package (each registers its rules on import)."""
    import cudalens.rules as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name not in {"registry", "context"} and not info.name.startswith("_"):
            importlib.import_module(f"cudalens.rules.{info.name}")
    return RULES


def run_rules(ctx: object, only: Iterable[str] | None = None) -> tuple[list[Finding], list[str]]:
    """Run the rules on ``ctx``. Returns (findings, problems).

    A rule that raises does not take the analysis down: its error becomes a line in ``problems``
    (reported as lower confidence), and the other rules still run.
    """
    load_all()
    wanted = set(only) if only is not None else None
    findings: list[Finding] = []
    problems: list[str] = []
    for rule_id, spec in sorted(RULES.items()):
        if wanted is not None and rule_id not in wanted:
            continue
        try:
            findings.extend(spec.check(ctx))
        except Exception as exc:  # noqa: BLE001 - a broken rule must not abort the report
            problems.append(f"rule {rule_id} failed: {type(exc).__name__}: {exc}")
    return findings, problems
