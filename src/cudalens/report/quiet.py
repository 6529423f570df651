"""The quiet text display of `check`: what to change first in full, housekeeping in one line.

Info-level hygiene (advice with no cost of its own: missing ``__launch_bounds__``, pointers without
``__restrict__``, unchecked return codes, precision flags; the rule declares it ``advisory``) is
collapsed to one line per file and rule ("Y1: 75 unchecked CUDA calls or launches; --show-all lists
them"); every other finding is listed. ``--statistics`` counts findings per rule, as ruff's does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from cudalens.findings import Finding, Priority
from cudalens.report.frames import finding_frame

#: What the findings of each hygiene rule are, for the collapsed line (one, several).
_NOUNS = {
    "Y1": ("CUDA call or launch", "CUDA calls or launches", "without an error check"),
    "Y2": ("device use", "device uses", "without a device-count check"),
    "E6": ("kernel", "kernels", "without __launch_bounds__"),
    "E10": ("kernel", "kernels", "built without a target flag"),
    "I16": ("kernel", "kernels", "built with precise-math flags"),
    "I17": ("kernel", "kernels", "with pointer parameters not marked __restrict__"),
    "L3": ("register cliff", "register cliffs", "that costs nothing today"),
}


def collapsible(f: Finding) -> bool:
    """Info-level hygiene: collapsed in the default display."""
    return f.priority is Priority.INFO and f.advisory


def split_hygiene(findings: Iterable[Finding]) -> tuple[list[Finding], list[str]]:
    """(findings listed in full, one line per collapsed rule in order of first appearance)."""
    listed: list[Finding] = []
    collapsed: Counter[str] = Counter()
    for f in findings:
        if collapsible(f):
            collapsed[f.rule] += 1
        else:
            listed.append(f)
    lines = [f"{rule}: {n} {_noun(rule, n)}; --show-all lists them" for rule, n in collapsed.items()]
    return listed, lines


def _noun(rule: str, n: int) -> str:
    if rule in _NOUNS:
        one, many, what = _NOUNS[rule]
        return f"{one if n == 1 else many} {what}"
    from cudalens.rules.catalog import CATALOG

    item = CATALOG.get(rule)
    return f"finding{'s' if n != 1 else ''}" + (f" ({item.title})" if item is not None else "")


def statistics_lines(findings: Sequence[Finding]) -> list[str]:
    """One line per rule, most findings first: count, rule, priority, title (ruff's --statistics)."""
    from cudalens.rules.catalog import CATALOG

    counts = Counter(f.rule for f in findings)
    priority = {f.rule: f.priority.value for f in findings}
    out = []
    for rule, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        item = CATALOG.get(rule)
        out.append(f"{n:>5}  {rule:<5} [{priority[rule]}] {item.title if item is not None else ''}".rstrip())
    return out


def speedup_text(f: Finding) -> str:
    """``~41%`` (estimated speedup of the program's kernel time when fixed), ``<1%``, or ``-``."""
    s = f.estimated_speedup
    if s is None:
        return "-"
    return f"~{s:.0%}" if s >= 0.005 else "<1%"


def summary_lines(result, show_all: bool = True, source=None) -> list[str]:
    """One header per file (finding counts by priority), then one line per finding, in ranked
    order with the estimated speedup beside the guide's priority (with its code frame when
    ``source``, path -> lines, is given: --show-source); without ``show_all``, info-level hygiene
    is collapsed to one line per rule (:mod:`cudalens.report.quiet`)."""
    lines = []
    total: dict[str, int] = {}
    for fa in result.files:
        counts: dict[str, int] = {}
        for f in fa.findings:
            counts[f.priority.value] = counts.get(f.priority.value, 0) + 1
            total[f.priority.value] = total.get(f.priority.value, 0) + 1
        tally = ", ".join(f"{counts[p.value]} {p.value}" for p in Priority if p.value in counts) or "no findings"
        lines.append(f"{fa.model.path}: {tally}")
        if fa.failure is not None:
            lines.append(f"  {fa.failure.kind}: {fa.failure.message()}")
        listed, collapsed = (list(fa.findings), []) if show_all else split_hygiene(fa.findings)
        for f in listed:
            where = f"{f.line}:{f.column or 1}" if f.line else "-"
            gain = speedup_text(f)
            lines.append(f"  {where:>8}  {gain:>5} {f.priority.value:<10} {f.rule:<5} {f.message}")
            if source is not None:
                lines += finding_frame(f, source, indent=" " * 18)
        lines += [f"  {c}" for c in collapsed]
        lines += [f"  note: {n}" for n in fa.notes if not n.startswith(("not compiled (", "fix: "))]
        lines += [f"  kernel {k.name}: {k.launch.describe()}" + _launch_shape(k.launch)
                  for k in fa.model.kernels if k.launch is not None]
    tally = ", ".join(f"{total[p.value]} {p.value}" for p in Priority if p.value in total) or "no findings"
    broken = len(result.source_only)
    failed = len(getattr(result, "failed", ()))
    extra = (f"; {broken} analysed source-only (not compiled)" if broken else "") + (f"; {failed} not analyzed" if failed else "")
    lines.append(f"{len(result.files)} file(s): {tally}{extra}")
    return lines


def _launch_shape(launch) -> str:
    """`` (block 16x16x1)`` of a launch with a block, else ``""``."""
    return f" (block {'x'.join(map(str, launch.block))})" if isinstance(launch.block, tuple) else ""
