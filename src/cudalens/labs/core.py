"""The shape of a lab: what the guide claims, how we measure it, how we judge it.

A *lab* reproduces one experiment of the CUDA Best Practices Guide (or one claim of the
Programming Guide's performance chapter) on the GPU at hand. Each lab is a frozen :class:`Lab`
record holding:

- ``measure(runner, quick)``: drives a :class:`~cudalens.labs.runner.Runner` (the real GPU, or a
  fake in tests) and returns a :class:`Measured` table. Column names carry their unit
  (``time_ms``, ``bandwidth_GBps`` with GB = 10^9 bytes, ...).
- ``verdict(rows, params)``: a *pure* function of that table saying whether the guide's claim
  holds on this GPU, and by how much (ratios, not only absolute numbers).
- the guide's own figures (mostly measured on a Tesla V100) with the section they come from.

:func:`run_lab` glues the pieces and never lets one failing lab stop the others: a failure
becomes a result with ``status="error"`` and the message.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Row = Mapping[str, Any]

GB = 1e9  # every GB in the labs is 10^9 bytes


@dataclass(frozen=True)
class GuideFigure:
    """A number the guide reports (e.g. 790 GB/s for an aligned copy on a V100)."""

    label: str
    value: float
    unit: str
    section: str
    device: str = "Tesla V100"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "value": self.value, "unit": self.unit,
                "section": self.section, "device": self.device}


@dataclass(frozen=True)
class KernelPair:
    """A bad/good kernel pair in the lab's .cu file for the static analyzer: `bad` should be
    flagged with `rule`, `good` should not."""

    bad: str
    good: str
    rule: str


@dataclass(frozen=True)
class PlotSpec:
    """How to draw the table: one line per distinct value of `series` (or per y column)."""

    x: str
    y: str
    series: str | None = None
    logx: bool = False
    logy: bool = False
    kind: str = "line"  # "line" | "bar"
    title: str = ""


@dataclass(frozen=True)
class Measured:
    """What a lab's measure step returns: the table and the parameters it ran with."""

    rows: tuple[Row, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """Does the claim hold here? ``holds`` is None where the table cannot decide."""

    holds: bool | None
    summary: str
    ratios: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"holds": self.holds, "summary": self.summary,
                "ratios": {k: _num(v) for k, v in self.ratios.items()}}


@dataclass(frozen=True)
class Lab:
    number: int
    name: str
    title: str
    rules: tuple[str, ...]
    section: str
    claim: str
    kernel_file: str | None
    measure: Callable[[Any, bool], Measured]
    verdict: Callable[[Sequence[Row], Mapping[str, Any]], Verdict]
    plot: PlotSpec | None = None
    guide_figures: tuple[GuideFigure, ...] = ()
    pairs: tuple[KernelPair, ...] = ()
    min_cc: tuple[int, int] = (0, 0)
    predict: Callable[[Sequence[Row], Mapping[str, Any]], tuple[Row, ...]] | None = None


@dataclass(frozen=True)
class LabResult:
    lab: str
    status: str  # "ok" | "skipped" | "error"
    rows: tuple[Row, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    verdict: Verdict | None = None
    predictions: tuple[Row, ...] = ()
    notes: tuple[str, ...] = ()
    message: str = ""
    device: Mapping[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self, lab: Lab | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": "cudalens.lab/1", "lab": self.lab, "status": self.status}
        if lab is not None:
            out.update({
                "number": lab.number, "title": lab.title, "rules": list(lab.rules),
                "section": lab.section, "claim": lab.claim,
                "guide_figures": [f.to_dict() for f in lab.guide_figures],
            })
        out.update({
            "device": dict(self.device),
            "params": {k: _num(v) for k, v in self.params.items()},
            "table": [{k: _num(v) for k, v in r.items()} for r in self.rows],
            "verdict": self.verdict.to_dict() if self.verdict else None,
            "predicted_vs_measured": [{k: _num(v) for k, v in r.items()} for r in self.predictions],
            "notes": list(self.notes),
            "message": self.message,
            "seconds": round(self.seconds, 3),
        })
        return out


def _num(v: Any) -> Any:
    """JSON-safe value: NaN/inf become None; numpy scalars become Python numbers."""
    if hasattr(v, "item") and not isinstance(v, (list, tuple, dict, str)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (list, tuple)):
        return [_num(x) for x in v]
    return v


# ---- small pure helpers shared by the verdict functions -------------------------------------

def bandwidth_gbps(nbytes: float, ms: float) -> float:
    """Effective bandwidth in GB/s (10^9 B/s) of moving `nbytes` in `ms` milliseconds."""
    if ms <= 0:
        return float("nan")
    return nbytes / (ms * 1e-3) / GB


def ratio(a: float, b: float) -> float:
    """a / b, NaN when b is zero or either side is missing."""
    try:
        if b == 0 or a is None or b is None:
            return float("nan")
        return float(a) / float(b)
    except (TypeError, ValueError):
        return float("nan")


def median(values: Sequence[float]) -> float:
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return statistics.median(vals) if vals else float("nan")


def pick(rows: Sequence[Row], **match: Any) -> Row | None:
    """The first row whose columns equal every given value."""
    for r in rows:
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def column(rows: Sequence[Row], name: str, **match: Any) -> list[Any]:
    return [r[name] for r in rows if all(r.get(k) == v for k, v in match.items())]


def fmt_x(value: float, digits: int = 2) -> str:
    """A ratio for a sentence: 1.63x."""
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.{digits}f}x"


def undecided(why: str) -> Verdict:
    return Verdict(None, why, {})
