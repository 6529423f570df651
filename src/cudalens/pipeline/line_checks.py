"""Every compiled-model prediction checked against the counters of its own line's instructions.

Nsight Compute's source page (``ncu --csv --page source --print-source cuda,sass``, built with
``-lineinfo``) gives per SASS instruction its executions, global sectors (and their ideal) and
shared N-way conflicts; :mod:`cudalens.profile.ncu_source` sums them per (kernel, file, line,
space, op) and compares them with the compiled access model's per-line predictions. Here that
check is run for an analysis, from an imported CSV or from a launch profiled by ``--counters=run``,
and each disagreement becomes one V1 finding naming the line.

For a profiled ``--run`` launch the compiled model is evaluated again at that launch's block, grid
and scalar arguments, so prediction and counters describe the same launch. For an imported CSV
the analysis' own evaluations are used (its launch: the launch site, ``--block``, ``--define``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cudalens.findings import Finding

#: CSV markers of a source page (a raw page has none of them)
_SOURCE_MARKERS = ('"Function Name"', '"Kernel Name"', '"File Path"')


def is_source_page(text: str) -> bool:
    """Whether ``text`` is an ``ncu --page source`` CSV (rather than ``--page raw``)."""
    head = text[:20000]
    return any(m in head for m in _SOURCE_MARKERS) and '"Address"' in head


@dataclass(frozen=True)
class LineEvidence:
    """The per-line checks of one analysis and the V1 findings of their disagreements."""

    checks: tuple[Any, ...]  # cudalens.profile.ncu_source.LineCheck
    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()

    def to_dicts(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.checks]


def _real(path: str) -> str:
    return os.path.realpath(path) if path else ""


def _evaluations(fa: Any, run: Any = None) -> list[Any]:
    """The compiled model's evaluations of ``fa``'s kernels: its own, or for ``run`` (a RunSpec)
    the run's kernel evaluated again at the run's launch."""
    evals = [e for rec in fa.kernels for e in rec.compiled_access]
    if run is None or fa.compiled is None or not getattr(fa.compiled, "ptx", ""):
        return evals
    from cudalens.access.ptx_eval import evaluate
    from cudalens.compiled.names import base_name_from_mangled
    from cudalens.compiled.ptx import parse_ptx
    from cudalens.measure.argspec import parse_args

    module = parse_ptx(fa.compiled.ptx)
    specs = parse_args(list(run.args))
    params = {i: s.value for i, s in enumerate(specs) if s.kind == "scalar" and isinstance(s.value, (int, float))}
    out = [e for e in evals if base_name_from_mangled(e.kernel) != run.kernel]
    for fn in module.entries:
        if base_name_from_mangled(fn.name) == run.kernel:
            out.append(evaluate(module, fn, tuple(run.block), tuple(run.grid), params))
    return out


def check_analysis(analysis: Any, csv_text: str, *, run: Any = None, source: str = "") -> LineEvidence:
    """Per-line checks of every analyzed kernel found in the source page ``csv_text``.

    ``run``: the RunSpec of a profiled launch (then the page comes from a build of the analyzed
    file's text by another name: its lines are the analyzed file's; the model is evaluated at the
    run's launch). InputError when ``csv_text`` is not a source page.
    """
    from cudalens.profile.ncu_source import check_lines, line_counters, parse_source_csv

    rows = parse_source_csv(csv_text)
    counters = line_counters(rows)
    checks: list[Any] = []
    notes: list[str] = []
    kernels_measured = {k[0] for k in counters}
    for fa in analysis.files:
        path = fa.model.path
        if run is not None:  # the profiled build named the file otherwise; same text, same lines
            if not any(k.name == run.kernel for k in fa.model.kernels):
                continue
            mine = {(k, path, ln, s, o): c for (k, _f, ln, s, o), c in counters.items()}
        else:
            mine = {(k, path, ln, s, o): c for (k, f, ln, s, o), c in counters.items() if _same_file(f, path, analysis)}
        by_kernel: dict[str, list[Any]] = {}
        for e in _evaluations(fa, run):
            by_kernel.setdefault(e.kernel, []).extend(p for p in e.predictions if _real(p.file) == _real(path))
        for kernel, preds in sorted(by_kernel.items()):
            if kernel not in kernels_measured:
                continue
            preds = [_at(p, path) for p in preds]
            checks.extend(check_lines(preds, mine, kernel, files=[path]))
    if not checks:
        names = ", ".join(sorted(kernels_measured)) or "none"
        notes.append(f"line counters{' from ' + source if source else ''}: no analyzed kernel's lines among "
                     f"the profiled ones (kernels: {names})")
    return LineEvidence(tuple(checks), tuple(v1_findings(checks)), tuple(notes))


def _same_file(measured: str, path: str, analysis: Any) -> bool:
    """A profiled file is the analyzed ``path`` by its real path, or (a page captured on another
    machine) by its name when no other analyzed file has that name."""
    if _real(measured) == _real(path):
        return True
    name = os.path.basename(measured)
    return name == os.path.basename(path) and sum(os.path.basename(fa.model.path) == name
                                                   for fa in analysis.files) == 1


def _at(p: Any, path: str) -> Any:
    import dataclasses

    return p if p.file == path else dataclasses.replace(p, file=path)


def v1_findings(checks: Sequence[Any]) -> list[Finding]:
    """One V1 finding per line whose counter contradicts the prediction, naming the line."""
    from cudalens.guided.crosscheck import v1_findings as of_checks

    return of_checks(lines=checks)
