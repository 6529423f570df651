"""Findings: what a rule reports. Frozen records; reports only format them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any, Mapping


class Priority(str, Enum):
    """The guide's priority of a recommendation ("-" in the catalog becomes INFO-ranked by impact)."""

    HIGH = "high"
    MEDIUM = "medium"
    MEDIUM_LOW = "medium-low"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for the most urgent; used to sort findings."""
        return _RANK[self]

    @classmethod
    def parse(cls, text: str) -> "Priority":
        try:
            return cls(text.lower())
        except ValueError:
            choices = ", ".join(p.value for p in cls)
            raise ValueError(f"unknown priority {text!r} (choose from {choices})") from None


_RANK = {Priority.HIGH: 0, Priority.MEDIUM: 1, Priority.MEDIUM_LOW: 2, Priority.LOW: 3, Priority.INFO: 4}


class Layer(str, Enum):
    """Where a piece of evidence came from (GUIDE_CATALOG's evidence layers)."""

    SOURCE = "source"
    COMPILED = "compiled"
    MODEL = "model"
    RUNTIME = "runtime"
    PROFILER = "profiler"
    LAB = "lab"


@dataclass(frozen=True)
class Evidence:
    """One fact a finding rests on: which layer established it, what it is, its value."""

    layer: Layer
    fact: str
    value: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"layer": self.layer.value, "fact": self.fact, "value": self.value}


@dataclass(frozen=True)
class SpeedupEstimate:
    """How much faster the program gets when a finding is fixed (Nsight Compute's "estimated
    speedup"), with its inputs: ``speedup`` = ``kernel_speedup`` x ``kernel_share``.

    ``source`` is "static" (the models and the device roofline: :mod:`cudalens.triage.speedup`) or
    "measured" (the kernel's measured time share replaces the estimated one)."""

    speedup: float  # share of the program's (file's) kernel time saved, 0..1
    kernel_speedup: float  # share of the kernel's own time saved
    kernel_share: float  # the kernel's share of the time (estimated or measured)
    bound: str  # memory | shared | compute: where the kernel sits on the roofline
    resource: str  # what the fix saves: memory | shared | compute | kernel (a share of all of it)
    saved_cycles_per_warp: float | None = None
    kernel_cycles_per_warp: tuple[tuple[str, float], ...] = ()
    launches: float | None = None
    warps: float | None = None
    source: str = "static"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["kernel_cycles_per_warp"] = dict(self.kernel_cycles_per_warp)
        return d


@dataclass(frozen=True)
class Finding:
    """A rule's verdict on one place in the code.

    ``impact`` is a number in [0, 1] where one can be computed (share of fetched bytes wasted,
    share of occupancy lost, share of measured time); ``impact_text`` says what it measures.
    ``status`` is "flagged" for a source/model finding, "confirmed" when a second layer agrees and
    "downgraded" when a second layer disagrees (kept, ranked last, never silently dropped).
    """

    rule: str
    priority: Priority
    section: str
    kernel: str | None
    file: str
    line: int | None
    message: str
    fix: str
    impact: float | None = None
    impact_text: str | None = None
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)
    status: str = "flagged"
    column: int | None = None  # 1-based column of the construct on ``line``, where located
    runs: float | None = None  # estimated executions per thread of the line (loop trip counts multiplied)
    advisory: bool = False  # hygiene advice with no cost of its own (declared by the rule)
    speedup: SpeedupEstimate | None = None  # estimated speedup when fixed (triage.speedup, guided.rank)

    @property
    def score(self) -> float | None:
        """The ranking key within a priority: cost (``impact``) x how often the code runs."""
        if self.impact is None:
            return None
        return self.impact * (self.runs if self.runs is not None else 1.0)

    def to_dict(self) -> dict[str, Any]:
        # the fields in order (what asdict gives: every other field holds a plain value), without
        # asdict's deep copy of the evidence and speedup that are written below
        d = {name: getattr(self, name) for name in _FINDING_FIELDS}
        d["priority"] = self.priority.value
        d["evidence"] = [e.to_dict() for e in self.evidence]
        d["impact_estimate"] = {"cost": self.impact, "cost_measures": self.impact_text, "runs_per_thread": self.runs,
                                "score": None if self.score is None else round(self.score, 6)}
        d["speedup"] = self.speedup.to_dict() if self.speedup is not None else None
        d["estimated_speedup"] = self.estimated_speedup
        return d

    @property
    def estimated_speedup(self) -> float | None:
        """The share of the time its fix saves (``speedup.speedup``), None where not estimated."""
        return None if self.speedup is None else self.speedup.speedup

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        """The inverse of :meth:`to_dict`: a finding a rule made, read back from a report."""
        evidence = tuple(Evidence(Layer(e["layer"]), e["fact"], e.get("value")) for e in d.get("evidence") or ())
        return cls(rule=d["rule"], priority=Priority.parse(d["priority"]), section=d.get("section", ""),
                   kernel=d.get("kernel"), file=d.get("file", ""), line=d.get("line"), message=d.get("message", ""),
                   fix=d.get("fix", ""), impact=d.get("impact"), impact_text=d.get("impact_text"),
                   evidence=evidence, status=d.get("status", "flagged"), column=d.get("column"),
                   runs=d.get("runs"), advisory=bool(d.get("advisory", False)),
                   speedup=_speedup_from_dict(d.get("speedup")))


_FINDING_FIELDS = tuple(f.name for f in fields(Finding))


def is_advisory(f: Finding) -> bool:
    """Hygiene advice with no cost of its own to point at (no ``__launch_bounds__``, pointers
    without ``__restrict__``, unchecked return codes, precision flags, build targets; the rule
    declares it). Within one guide priority it ranks after findings that name a concrete cost, so
    that "what to change first" names the problem, not the housekeeping."""
    return f.advisory


#: Estimated speedups closer than this rank as equal (the guide's priority breaks the tie).
SPEEDUP_RESOLUTION = 0.001


def speedup_key(f: Finding) -> float:
    """The ranking key of the estimated speedup: larger first, in steps of SPEEDUP_RESOLUTION; a
    finding without an estimate counts as none (0)."""
    s = f.estimated_speedup or 0.0
    return -round(s / SPEEDUP_RESOLUTION)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Downgraded last; then larger estimated speedup (:class:`SpeedupEstimate`, Nsight Compute's
    order); ties broken by the guide's priority, concrete before advisory, then larger estimated
    impact weighted by how often the code runs (:attr:`Finding.score`), then file and line."""
    return sorted(
        findings,
        key=lambda f: (
            f.status == "downgraded",
            speedup_key(f),
            f.priority.rank,
            is_advisory(f),
            f.score is None,
            -(f.score if f.score is not None else 0.0),
            f.file,
            f.line or 0,
            f.rule,
        ),
    )


def _speedup_from_dict(d: Mapping[str, Any] | None) -> SpeedupEstimate | None:
    if not d:
        return None
    cycles = tuple((str(k), float(v)) for k, v in (d.get("kernel_cycles_per_warp") or {}).items())
    return SpeedupEstimate(float(d["speedup"]), float(d["kernel_speedup"]), float(d["kernel_share"]), str(d["bound"]),
                           str(d["resource"]), d.get("saved_cycles_per_warp"), cycles, d.get("launches"), d.get("warps"),
                           str(d.get("source", "static")))
