"""The rule registry: one entry per GUIDE_CATALOG item that has a working detector.

A rule is one file, ``rules/<chapter>/<id>_<name>.py``, holding a function ``detects(ctx) ->
Iterable[Finding]`` decorated with :func:`rule`. Its docstring is the rule's documentation page,
written in the form of ruff's rule pages:

    What it does / Why it matters / Example / Fix

The catalog (:mod:`cudalens.rules.catalog`) is the one source of the rule's id, title, guide
section and priority; the decorator declares everything else about it: its evidence layers,
whether it is advisory (hygiene advice with no cost of its own to point at), how its impact is
estimated, what compiled evidence confirms it, which counter verifies it, how a measurement
re-ranks it, and which other rules' findings it supersedes. Overlaps are resolved once, here
(:func:`resolve_overlaps`), never by a rule calling another rule.

A rule reads facts only (``ctx``, a :class:`cudalens.rules.context.RuleContext`); it never parses,
compiles or measures, and builds its findings with ``ctx.finding(...)``. Missing evidence means
"not established": the rule yields nothing rather than guessing.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
import sys
from dataclasses import dataclass
from typing import Callable, Iterable, Literal

from cudalens.errors import what_failed
from cudalens.findings import Evidence, Finding, Layer, Priority
from cudalens.quantities import Quantity, measured_rows
from cudalens.rules.catalog import ITEMS
from cudalens.rules.context import RuleContext
from cudalens.rules.layers import LAYERS, STATIC_LAYERS

Check = Callable[[RuleContext], Iterable[Finding]]
#: How a measurement re-ranks a finding (cudalens.guided.rank): by wasted DRAM bytes (memory; and
#: by the profiler's per-direction waste for coalescing), or by lost occupancy when latency-bound.
Measured = Literal["memory", "coalescing", "occupancy"]
HEADINGS = ("What it does", "Why it matters", "Example", "Fix")


@dataclass(frozen=True)
class Confirmation:
    """Compiled evidence that confirms a source finding (cudalens.compiled.confirm): instructions
    of these SASS classes on the finding's line (anywhere in the kernel without line info);
    ``stack_frame``: the kernel must also have a stack frame (local_bytes > 0)."""

    classes: tuple[str, ...]
    words: str
    stack_frame: bool = False


@dataclass(frozen=True)
class RuleSpec:
    id: str
    name: str
    priority: Priority
    section: str
    layers: str
    checks: tuple[Check, ...]
    doc: str
    advisory: bool = False
    impact: str | None = None  # how the finding's impact is estimated, in words
    measured: Measured | None = None
    confirmed_by: Confirmation | None = None
    verified_by: tuple[Quantity, ...] = ()  # the rows of cudalens.quantities whose counters verify it
    supersedes: tuple[str, ...] = ()
    carries_priority: bool = False  # a superseding finding takes the superseded one's priority
    one_per: tuple[str, ...] = ()  # keep one finding per kernel and value of these evidence facts
    kernel_wide: tuple[Check, ...] = ()  # detectors whose findings speak for their whole kernel
    requires: tuple[frozenset[str], ...] = ()  # per detector of ``checks``: the layers it reads
    spoken_for_by: tuple[str, ...] = ()  # static items naming the same problem as a measured finding

    def check(self, ctx: RuleContext) -> list[Finding]:
        """Run every detector of this item, without resolving overlaps with other rules."""
        return [f for _, f in self._run(ctx)]

    def _run(self, ctx: RuleContext) -> list[tuple[bool, Finding]]:
        return [(detector in self.kernel_wide, f) for detector in self.checks for f in detector(ctx)]


RULES: dict[str, RuleSpec] = {}


def rule(id: str, *, name: str, layers: str, advisory: bool = False, impact: str | None = None,
         measured: Measured | None = None, confirmed_by: Confirmation | None = None,
         verified_by: str | tuple[str, ...] = (), supersedes: tuple[str, ...] = (), carries_priority: bool = False,
         one_per: tuple[str, ...] = (), kernel_wide: bool = False,
         requires: tuple[str, ...] = ("source",),
         spoken_for_by: tuple[str, ...] = ()) -> Callable[[Check], Check]:
    """Register ``check`` as a detector of catalog item ``id`` (priority and section: the catalog's).

    One item may have several detectors, one per evidence layer (I6 from the source's calls and
    from the compiler's SASS, say). They share the id and the declarations; their documentation
    pages are joined and their findings are all reported. ``kernel_wide``: the detector's
    findings stand for their whole kernel when another rule supersedes this one.

    ``requires``: the context layers the detector reads (:data:`cudalens.rules.layers.LAYERS`);
    it runs only when all of them are present, as Nsight Compute's ``require_metrics`` does. A
    detector of a measured layer (a trace, counters, checks) documents itself in one paragraph:
    the rule's page (the first detector's, with the four sections) stays the one page.

    ``verified_by``: the measured quantities (rows of :mod:`cudalens.quantities`, by name) whose
    counters verify the rule's figures; a name that is not a measured row fails at registration.

    ``spoken_for_by``: static findings of these items name the same problem as this item's
    measured findings, so a measured finding is dropped where the model already reported one of
    them (or this item) for the kernel: the cross-check then speaks for it.
    """
    item = ITEMS.get(id)
    if item is None:
        raise RuntimeError(f"rule {id}: not a GUIDE_CATALOG id (nor a validation item)")
    needs = frozenset(requires)
    if not needs or not needs <= LAYERS:
        raise RuntimeError(f"rule {id}: requires {sorted(needs - LAYERS) or '()'}: not a layer")
    try:
        verified = measured_rows(verified_by) if verified_by else ()
    except ValueError as e:
        raise RuntimeError(f"rule {id}: verified_by: {e}") from None

    def decorate(detector: Check) -> Check:
        @functools.wraps(detector)
        def check(ctx: RuleContext) -> Iterable[Finding]:
            if not all(ctx.has(layer) for layer in needs):
                return ()
            return detector(ctx.for_rule(id, RULES[id].advisory))

        doc = (detector.__doc__ or "").strip()
        static = needs <= STATIC_LAYERS
        for heading in HEADINGS if static or id not in RULES else ():
            if heading not in doc:
                raise RuntimeError(f"rule {id}: docstring lacks the section {heading!r}")
        wide = (check,) if kernel_wide else ()
        first = RULES.get(id)
        if first is not None and not static:  # a measured layer's detector: the page and layers stay
            RULES[id] = dataclasses.replace(first, checks=first.checks + (check,), requires=first.requires + (needs,),
                                            spoken_for_by=first.spoken_for_by + tuple(spoken_for_by))
        elif first is not None:
            merged = sorted(set(first.layers.split()) | set(layers.split()), key="SCMRPL".find)
            RULES[id] = dataclasses.replace(first, layers=" ".join(merged), checks=first.checks + (check,),
                                            doc=first.doc + "\n\n" + doc, kernel_wide=first.kernel_wide + wide,
                                            requires=first.requires + (needs,))
        else:
            RULES[id] = RuleSpec(id, name, item.priority, item.section, layers, (check,), doc, advisory, impact,
                                 measured, confirmed_by, verified, tuple(supersedes), carries_priority,
                                 tuple(one_per), wide, (needs,), tuple(spoken_for_by))
        return check

    return decorate


def load_all() -> dict[str, RuleSpec]:
    """Import every rule module of this package's chapter packages (each registers its rule)."""
    package = sys.modules[__name__.rpartition(".")[0]]  # cudalens.rules, loaded before any submodule
    _import_rule_modules(tuple(package.__path__))
    return RULES


@functools.cache
def _import_rule_modules(path: tuple[str, ...]) -> None:
    """The walk over the rule packages on ``path``, once per process and path (a module imported
    stays registered; the walk lists folders, and confirming each finding asks for the rules again)."""
    for info in pkgutil.walk_packages(list(path), prefix="cudalens.rules."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):
            importlib.import_module(info.name)



def rules_reading(layers: Iterable[str]) -> dict[str, RuleSpec]:
    """The rules with a detector that runs on ``layers`` alone: a command's rule table (SARIF)."""
    have = frozenset(layers)
    return {rid: spec for rid, spec in load_all().items() if any(needs <= have for needs in spec.requires)}


def _fact(f: Finding, name: str) -> object:
    return next((e.value for e in f.evidence if e.fact == name), None)


def _same_place(winner: Finding, loser: Finding, kernel_wide: bool) -> bool:
    if winner.file != loser.file or winner.kernel != loser.kernel:
        return False
    if kernel_wide:
        return True
    if winner.line != loser.line:
        return False
    w, lo = _fact(winner, "index"), _fact(loser, "index")
    return w is None or lo is None or w == lo


def resolve_overlaps(found: list[tuple[bool, Finding]]) -> list[Finding]:
    """Apply every rule's ``supersedes`` and ``one_per`` declarations, once, over all findings.

    A finding of rule S is dropped where a rule that supersedes S flagged the same place: the same
    line (and the same index expression where both name one), or the same kernel for a kernel-wide
    detector of S. A superseding rule that ``carries_priority`` takes the dropped finding's priority
    where it is more urgent, with the evidence ``supersedes: S``. Then ``one_per`` keeps the first
    finding of a rule per kernel and value of the named facts. Order is kept.
    """
    by_rule: dict[str, list[Finding]] = {}
    for _, f in found:
        by_rule.setdefault(f.rule, []).append(f)
    winners_of: dict[str, list[str]] = {}
    for spec in RULES.values():
        for loser in spec.supersedes:
            winners_of.setdefault(loser, []).append(spec.id)
    dropped: set[int] = set()
    carried: dict[int, list[Finding]] = {}
    for wide, f in found:
        for wid in winners_of.get(f.rule, ()):
            hits = [w for w in by_rule.get(wid, ()) if _same_place(w, f, wide)]
            if hits:
                dropped.add(id(f))
                if RULES[wid].carries_priority:
                    for w in hits:
                        carried.setdefault(id(w), []).append(f)
    out: list[Finding] = []
    seen: set[tuple[object, ...]] = set()
    for _, f in found:
        if id(f) in dropped:
            continue
        for lost in carried.get(id(f), ()):
            if lost.priority.rank < f.priority.rank:
                f = dataclasses.replace(f, priority=lost.priority,
                                        evidence=f.evidence + (Evidence(Layer.MODEL, "supersedes", lost.rule),))
        declared = RULES.get(f.rule)
        if declared is not None and declared.one_per:
            key = (f.rule, f.file, f.kernel, *(repr(_fact(f, n)) for n in declared.one_per))
            if key in seen:
                continue
            seen.add(key)
        out.append(f)
    return out


def run_layer(ctx: RuleContext, layer: str) -> list[Finding]:
    """The findings of every detector that reads ``layer`` (and whose other layers ``ctx`` has),
    by rule id. Measured layers have no overlaps to resolve; a detector that raises propagates."""
    load_all()
    return [f for _, spec in sorted(RULES.items()) for detector, needs in zip(spec.checks, spec.requires)
            if layer in needs for f in detector(ctx)]


def run_rules(ctx: RuleContext, only: Iterable[str] | None = None) -> tuple[list[Finding], list[str]]:
    """Run the rules on ``ctx`` and resolve their overlaps. Returns (findings, problems).

    A rule that raises does not take the analysis down: its error becomes a line in ``problems``
    (reported as lower confidence), and the other rules still run.
    """
    load_all()
    wanted = set(only) if only is not None else set(RULES)
    # the rules a selected rule's findings depend on: those superseding it, those it supersedes
    needed = set(wanted)
    for spec in RULES.values():
        if spec.id in wanted:
            needed.update(spec.supersedes)
        if wanted & set(spec.supersedes):
            needed.add(spec.id)
    found: list[tuple[bool, Finding]] = []
    problems: list[str] = []
    for rule_id, spec in sorted(RULES.items()):
        if rule_id not in needed:
            continue
        try:
            found.extend(spec._run(ctx))
        except Exception as exc:  # noqa: BLE001 - a broken rule must not abort the report
            if rule_id in wanted:
                problems.append(f"rule {rule_id} failed ({what_failed(exc)})")
    return [f for f in resolve_overlaps(found) if f.rule in wanted], problems
