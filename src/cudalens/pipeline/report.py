"""One typed report of a run of ``analyze``, ``check`` or ``profile``: what every emitter
(:mod:`cudalens.report.emit`) reads and what the Python API returns.

A :class:`Report` holds the run's records (the analysis, its measured evidence, or the application
profile), the findings left out per reason, where the target came from, warnings, and the source
lines its findings point at (read once, when the report is made: an emitter never opens a file).
The guided analysis (findings re-ranked with the evidence, cross-checks, first steps, speed of
light) is typed (:class:`cudalens.guided.merge.Guided`) and made on first use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from cudalens.findings import Finding, Priority
from cudalens.pipeline.analysis import Analysis
from cudalens.pipeline.measured import Evidence

if TYPE_CHECKING:  # imported where used: check's report reads no guided analysis (nor numpy)
    from cudalens.guided.merge import Guided

#: the commands that make a report
COMMANDS = ("analyze", "check", "profile")


@dataclass(frozen=True, repr=False)
class Report:
    """What one run established.

    ``command``: the command it answers (analyze | check | profile; each has its own text view and
    its own rule list in SARIF). ``analysis``: the records (files, kernels, findings after
    ``select``/``ignore``/suppressions/baseline; None for ``profile``). ``suppressed``: the findings
    left out per reason. ``evidence``: the measured launch and counters (``analyze`` with run= or
    counters=). ``target``: where the compute capability came from (option | config | device |
    default). ``warnings``: unknown [tool.cudalens] keys, unknown or unused suppression comments.
    ``sources``: the lines of each file a finding points at. ``profile``: ``cudalens profile``'s
    document (``cudalens/profile-1``)."""

    command: str = "analyze"
    analysis: Analysis | None = None
    suppressed: Mapping[str, int] = field(default_factory=dict)
    evidence: Evidence | None = None
    target: str = "default"
    warnings: tuple[str, ...] = ()
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    profile: Mapping[str, Any] | None = None

    @cached_property
    def guided(self) -> Guided:
        """The analysis merged with the evidence: findings ranked by their estimated cost
        (measured where measured), V1 per disagreement, cross-checks, first steps, speed of light."""
        from cudalens.guided.merge import guide

        analysis = self._analysis()
        ev = self.evidence or Evidence()
        findings = analysis.findings + (list(ev.lines.findings) if ev.lines is not None else [])  # V1 per line too
        records = [rec for fa in analysis.files for rec in fa.kernels]
        return guide(records, findings, counters=ev.counters or None, measurement=ev.measurement)

    @property
    def ranked(self) -> tuple[Finding, ...]:
        """The findings the report lists, in its order: ``analyze``'s ranked by the guided analysis
        (with the evidence's), ``check``'s as the analysis ranks them, ``profile``'s by measured cost."""
        if self.command == "profile":
            return tuple(Finding.from_dict(f) for f in (self.profile or {}).get("findings") or ())
        return self.guided.findings if self.command == "analyze" else self.findings

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding of the analysis, ranked (``profile``: those of its kernels)."""
        if self.analysis is None:
            return self.ranked if self.command == "profile" else ()
        return tuple(self.analysis.findings)

    @property
    def files(self) -> tuple[Any, ...]:
        return tuple(self.analysis.files) if self.analysis is not None else ()

    @property
    def cc(self) -> str:
        if self.analysis is None:
            return str(((self.profile or {}).get("device") or {}).get("cc"))
        return str(self.analysis.cc)

    @property
    def failed(self) -> tuple[tuple[str, str], ...]:
        """(path, reason) of the files that could not be analyzed (``check`` goes on past them)."""
        return tuple(self.analysis.failed) if self.analysis is not None else ()

    @property
    def notes(self) -> tuple[str, ...]:
        """What limited the analysis as a whole (the project's launch resolution stopped) and what
        could not be measured or read (no GPU, no ncu, ...), one line each."""
        if self.analysis is None:
            return tuple((self.profile or {}).get("notes") or ())
        return (*self.analysis.notes, *(self.evidence.notes if self.evidence is not None else ()))

    def at_or_above(self, priority: str | Priority) -> list[Finding]:
        """The findings at ``priority`` or above ("high", "medium", ...)."""
        p = priority if isinstance(priority, Priority) else Priority.parse(priority)
        return [f for f in self.findings if f.priority.rank <= p.rank]

    def line(self, path: str, number: int | None) -> str:
        """Line ``number`` (1-based) of ``path`` as the report carries it; "" when it does not."""
        lines = self.sources.get(path, ())
        return lines[number - 1] if number and 0 < number <= len(lines) else ""

    def guided_document(self) -> dict[str, Any]:
        """The analysis JSON merged with the evidence (the document HTML is drawn from)."""
        return {**guided_report(self._analysis(), self.evidence, self.guided), "suppressed": dict(self.suppressed)}

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``--format json`` prints: ``cudalens/analysis-1`` (merged with the
        evidence when there is any), or ``cudalens/profile-1``."""
        if self.command == "profile":
            return dict(self.profile or {})
        if self.evidence is not None:
            return self.guided_document()
        return {**self._analysis().to_dict(), "suppressed": dict(self.suppressed)}

    def _analysis(self) -> Analysis:
        if self.analysis is None:
            raise ValueError(f"a {self.command} report holds no analysis")
        return self.analysis

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.priority.value] = counts.get(f.priority.value, 0) + 1
        tally = ", ".join(f"{counts[p.value]} {p.value}" for p in Priority if p.value in counts) or "no findings"
        if self.command == "profile":
            return f"<cudalens.Report: profile of {' '.join((self.profile or {}).get('command') or ())}: {tally}>"
        return f"<cudalens.Report: {len(self.files)} file(s), CC {self.cc}: {tally}>"


def guided_report(analysis: Analysis, evidence: Evidence | None = None, guided: Guided | None = None) -> dict[str, Any]:
    """The analysis JSON merged with the evidence (the keys of :meth:`Guided.to_dict`).

    Keys are only added to ``cudalens/analysis-1``: the guided ones, plus ``measurement`` (the
    BenchResult dict or None), ``counters_source`` and ``evidence_notes``."""
    ev = evidence or Evidence()
    if guided is None:
        guided = Report(analysis=analysis, evidence=evidence).guided
    out = analysis.to_dict()
    out.update(guided.to_dict())
    out["measurement"] = ev.measurement.to_dict() if ev.measurement is not None else None
    out["counters_source"] = ev.counters_source
    out["evidence_notes"] = list(ev.notes)
    if ev.lines is not None:
        checks = ev.lines.to_dicts()
        out["line_checks"] = checks
        out["line_checks_summary"] = {"lines": len(checks), "predicted": sum(c["predicted"] is not None for c in checks),
                                      "agree": sum(c["agree"] is True for c in checks),
                                      "disagree": sum(c["agree"] is False for c in checks)}
    return out


_R = TypeVar("_R", bound=Report)


def read_sources(paths: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The lines of each file (UTF-8, undecodable bytes replaced; a file that cannot be read has none)."""
    out: dict[str, tuple[str, ...]] = {}
    for path in paths:
        if path and path not in out:
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    out[path] = tuple(fh.read().splitlines())
            except OSError:
                out[path] = ()
    return out


def with_sources(report: _R) -> _R:
    """``report`` carrying the lines of every file its findings can point at (the analysed files,
    their kernels' files, the findings' files, the profile's findings' files)."""
    paths: list[str] = []
    if report.analysis is not None:
        for fa in report.analysis.files:
            paths += [fa.model.path, *(rec.kernel.file for rec in fa.kernels), *(f.file for f in fa.findings)]
    if report.evidence is not None and report.evidence.lines is not None:
        paths += [f.file for f in report.evidence.lines.findings]
    paths += [f.get("file") or "" for f in (report.profile or {}).get("findings") or () if f.get("line")]
    return dataclasses.replace(report, sources=read_sources(paths))
