"""Every compiled-model prediction checked against the counters of its own line's instructions.

Nsight Compute's source page (``ncu --csv --page source --print-source cuda,sass``, built with
``-lineinfo``) gives per SASS instruction its executions, global sectors (and their ideal) and
shared N-way conflicts; :mod:`cudalens.profile.ncu_source` sums them per (kernel, file, line,
space, op) and compares them with the compiled access model's per-line predictions. Here that
check is run for an analysis, from an imported CSV or from a launch profiled by ``--counters=run``,
and each disagreement becomes one V1 finding naming the line.

The lines compared are those of each analyzed file and, for an imported page, those of the
project's headers its kernels inline (``_header_checks``: per kernel, the header line's figure over
that kernel's instructions of the line, as the kernel's page sums them), reported with the header.

For a profiled ``--run`` launch the compiled model is evaluated again at that launch's block, grid
and scalar arguments, so prediction and counters describe the same launch. For an imported CSV
the analysis' own evaluations are used (its launch: the launch site, ``--block``, ``--define``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
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
    out = [e for e in evals if base_name_from_mangled(e.kernel) != run.base_name]
    for fn in module.entries:
        if base_name_from_mangled(fn.name) == run.base_name:
            out.append(evaluate(module, fn, tuple(run.block), tuple(run.grid), params))
    return out


def check_analysis(analysis: Any, csv_text: str, *, run: Any = None, source: str = "",
                   launches: Mapping[str, Any] | None = None) -> LineEvidence:
    """Per-line checks of every analyzed kernel found in the source page ``csv_text``.

    ``run``: the RunSpec of a profiled launch (then the page comes from a build of the analyzed
    file's text by another name: its lines are the analyzed file's; the model is evaluated at the
    run's launch). ``launches``: the launch each profiled kernel measured, by kernel name (an ncu
    details page: cudalens.profile.ncu_launch), for an imported page: each kernel's lines are
    compared with its evaluation under that launch where the tool found it, else said so
    (:mod:`cudalens.evidence.profiled_launch`). InputError when ``csv_text`` is not a source page.
    """
    from cudalens.profile.ncu_source import check_lines, line_counters, parse_source_csv

    rows = parse_source_csv(csv_text)
    counters = line_counters(rows)
    checks: list[Any] = []
    notes: list[str] = []
    kernels_measured = {k[0] for k in counters}
    headers: list[Any] = []  # checks of lines in the headers the kernels inline
    for fa in analysis.files:
        path = fa.model.path
        if run is not None:  # the profiled build named the file otherwise; same text, same lines
            if not any(k.name == run.base_name for k in fa.model.kernels):
                continue
            mine = {(k, path, ln, s, o): c for (k, _f, ln, s, o), c in counters.items()}
        else:
            mine = {(k, path, ln, s, o): c for (k, f, ln, s, o), c in counters.items() if _same_file(f, path, analysis)}
        by_kernel: dict[str, list[Any]] = {}
        evals = _evaluations(fa, run)
        prefix: dict[str, str] = {}
        if run is None and launches:
            from cudalens.evidence.profiled_launch import evaluations

            evals, prefix, launch_notes = evaluations(fa, evals, launches)
            notes.extend(launch_notes)
        for e in evals:
            by_kernel.setdefault(e.kernel, []).extend(e.predictions)
        for kernel, every in sorted(by_kernel.items()):
            if kernel not in kernels_measured:
                continue
            preds = [p for p in every if _real(p.file) == _real(path) or (run is None and _one_call(p, path))]
            counts = mine
            if run is None:  # the lines of headers the kernel inlines too: ptxas may place their SASS
                counts = {**_header_counters(counters, kernel, path, preds, analysis), **mine}  # at the call
            kept = {id(p) for p in preds}
            spread = [_at(p, path) for p in every if run is None and id(p) not in kept]  # per call only
            said = prefix.get(kernel, "")

            def told(found: Any, said: str = said) -> list[Any]:  # the profiled launch's note, where one is due
                return [dataclasses.replace(c, reason=(said + c.reason).rstrip("; ")) if said else c for c in found]

            checks.extend(told(check_lines([_at(p, path) for p in preds], counts, kernel, files=[path], spread=spread)))
            if run is None:
                headers.extend(told(_header_checks(counters, kernel, path, every, mine, analysis)))
    done = {(c.kernel, _real(c.file), c.line, c.quantity) for c in checks}
    for c in headers:  # once each; a file analysed itself is checked as such
        key = (c.kernel, _real(c.file), c.line, c.quantity)
        if key not in done:
            done.add(key)
            checks.append(c)
    if not checks:
        names = ", ".join(sorted(kernels_measured)) or "none"
        notes.append(f"line counters{' from ' + source if source else ''}: no analyzed kernel's lines among "
                     f"the profiled ones (kernels: {names})")
    return LineEvidence(tuple(checks), tuple(v1_findings(checks)), tuple(notes))


def _header_checks(counters: Any, kernel: str, path: str, preds: Sequence[Any], mine: Any,
                   analysis: Any) -> list[Any]:
    """``kernel``'s measured lines of the project's headers it inlines (files its predictions name,
    outside the toolkit's): the kernel's source page sums, per header line, the SASS of every
    instance inlined into this kernel, and the model's figure for that line averages the same
    instances' PTX instructions (by their ``.loc``, whatever the call). Each check names the header."""
    from cudalens.compiled.ptx import is_system_file
    from cudalens.profile.ncu_source import check_lines

    headers = {p.file for p in preds if p.file and _real(p.file) != _real(path) and not is_system_file(p.file)}
    if not headers:
        return []
    counts = {**_header_counters(counters, kernel, path, preds, analysis), **mine}
    return check_lines([_at(p, path) for p in preds], counts, kernel, files=sorted(headers))


def _one_call(p: Any, path: str) -> bool:
    """Whether ``p`` (a line of another file) was inlined into one line of ``path`` at most: the
    figure of a header line inlined at several calls averages them all, so it stands for none."""
    return len({ln for f, ln in getattr(p, "call_sites", ()) if _real(f) == _real(path)}) <= 1


def _header_counters(counters: Any, kernel: str, path: str, preds: Sequence[Any], analysis: Any) -> dict[tuple, Any]:
    """``kernel``'s counters of lines outside the analyzed file, keyed by the file the model's
    predictions name (matched by file name where that is unique), so that a measured line of the
    analyzed file holding SASS of an inlined helper is compared with the helper's figures (the
    predictions' call sites) and a helper line with SASS of its own is not taken as placed elsewhere."""
    names: dict[str, str | None] = {}
    for p in preds:
        if _real(p.file) != _real(path):
            name = os.path.basename(p.file)
            names[name] = p.file if names.get(name, p.file) == p.file else None
    out = {}
    for (k, f, ln, s, o), c in counters.items():
        if k == kernel and not _same_file(f, path, analysis):
            out[(k, names.get(os.path.basename(f)) or f, ln, s, o)] = c
    return out


def _same_file(measured: str, path: str, analysis: Any) -> bool:
    """A profiled file is the analyzed ``path`` by its real path, or (a page captured on another
    machine) by its name when no other analyzed file has that name."""
    if _real(measured) == _real(path):
        return True
    name = os.path.basename(measured)
    return name == os.path.basename(path) and sum(os.path.basename(fa.model.path) == name
                                                   for fa in analysis.files) == 1


def _at(p: Any, path: str) -> Any:
    """``p`` with the analyzed file named as ``path``: its own file when it is that file, and the
    calls it was inlined into (the compiler names files by their full path)."""
    here = _real(p.file) == _real(path)
    sites = tuple((path if _real(f) == _real(path) else f, ln) for f, ln in getattr(p, "call_sites", ()))
    bounds = tuple((path if _real(b[0]) == _real(path) else b[0], *b[1:]) for b in getattr(p, "site_bounds", ()))
    if (p.file == path or not here) and sites == tuple(getattr(p, "call_sites", ())) \
            and bounds == tuple(getattr(p, "site_bounds", ())):
        return p
    return dataclasses.replace(p, file=path if here else p.file, call_sites=sites, site_bounds=bounds)


def v1_findings(checks: Sequence[Any]) -> list[Finding]:
    """One V1 finding per line whose counter contradicts the prediction, naming the line."""
    from cudalens.guided.crosscheck import v1_findings as of_checks

    return of_checks(lines=checks)
