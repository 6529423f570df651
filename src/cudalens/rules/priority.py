"""The priority a finding earns where the guide gives none ("-" in the catalog), from its cost.

Never lower than the rule gave (SH3 carries G3's priority where it supersedes G3), so a 32-way bank
conflict in a loop ranks above a medium-low loop-counter nit and ``--fail-on`` can reach it: a cost
(``Finding.impact``) of at least 50 % in code that runs repeatedly (or kernel-wide, such as
occupancy) is medium, at least 25 % is low, the rest stays info. The guide's own priorities are
never changed. :mod:`cudalens.triage.impact` applies it once a finding's runs are known.
"""

from __future__ import annotations

from cudalens.findings import Finding, Priority, is_advisory
from cudalens.rules.catalog import CATALOG

MEDIUM_COST = 0.5
LOW_COST = 0.25


def derived_priority(f: Finding, kernel_wide: bool) -> Priority:
    """The priority of a finding whose catalog item has none ("-"), from its cost."""
    item = CATALOG.get(f.rule)
    if item is None or item.guide_priority != "-" or f.impact is None or is_advisory(f):
        return f.priority
    repeated = (f.runs or 1.0) > 1.0 or kernel_wide
    earned = f.priority
    if f.impact >= MEDIUM_COST and repeated:
        earned = Priority.MEDIUM
    elif f.impact >= LOW_COST:
        earned = Priority.LOW
    return min(earned, f.priority, key=lambda p: p.rank)  # never below what the rule gave
