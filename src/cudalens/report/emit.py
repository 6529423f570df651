"""One emitter per format, for the reports of ``analyze``, ``check`` and ``profile`` alike.

:func:`emit` takes a :class:`cudalens.pipeline.report.Report` and a format and returns the text a
command prints or writes: JSON (the report's document), SARIF 2.1.0, one HTML page, the terminal
text (``analyze``: findings by kernel, then the guided sections; ``check``: a summary per file;
``profile``: where the time goes), ``concise``/``github`` one line per finding, or ``statistics``
(findings per rule). Every emitter reads the report only: the source lines a SARIF fingerprint or
an HTML excerpt needs are the ones the report carries.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cudalens import json_text
from cudalens.errors import InputError
from cudalens.pipeline.analysis import json_default
from cudalens.pipeline.report import Report
from cudalens.report.frames import with_frames

FORMATS = ("text", "concise", "github", "json", "html", "sarif", "statistics")


@dataclass(frozen=True)
class Style:
    """How a report is shown (not what it holds). ``terminal``: rendered for a TTY (its width and
    colours). ``to_file``: written to ``-o`` (the evidence notes go in the text; on standard output
    the command printed them to standard error). ``show_source``: code frames under the findings
    (text, concise). ``show_all``: ``check``'s text lists info-level hygiene in full."""

    terminal: bool = False
    to_file: bool = False
    show_source: bool = False
    show_all: bool = True


def emit(report: Report, fmt: str, style: Style = Style()) -> str:
    """``report`` in ``fmt`` (one of :data:`FORMATS`): the text to print or write, ending in one
    newline."""
    emitter = _EMITTERS.get(fmt)
    if emitter is None or (report.command == "profile" and fmt not in _PROFILE_FORMATS):
        raise InputError(f"--format {fmt}: not a format of {report.command}")
    text = emitter(report, style)
    return text if text.endswith("\n") else text + "\n"


def _json(report: Report, style: Style) -> str:
    doc = report.to_dict()
    files = report.analysis.files if report.analysis is not None and "kernels" in doc else ()
    if not any(fa.kernels_json is not None for fa in files):
        return json_text.dumps(doc, 2, json_default)
    # records read already rendered (a cached analysis): written into the document as they are
    from cudalens.pipeline.analysis import kernels_json

    records = [r for fa in files for r in kernels_json(fa)]
    text = json_text.dumps({**doc, "kernels": _RECORDS}, 2, json_default)
    body = "[\n" + ",\n".join("    " + r.replace("\n", "\n    ") for r in records) + "\n  ]" if records else "[]"
    return text.replace(json.dumps(_RECORDS), body, 1)


_RECORDS = "\0the kernel records\0"  # where they go (json writes it \u0000..., which no value holds)


def _sarif(report: Report, style: Style) -> str:
    from cudalens.report.sarif import to_sarif
    from cudalens.rules.layers import ANALYSIS_LAYERS, STATIC_LAYERS
    from cudalens.rules.registry import rules_reading

    if report.command == "profile":
        from cudalens.report.profile_html import sarif_log

        return json.dumps(sarif_log(report.to_dict(), report.line), indent=2)
    analysis = report.analysis
    assert analysis is not None
    layers = ANALYSIS_LAYERS if report.command == "analyze" else STATIC_LAYERS
    log = to_sarif(report.ranked, rules_reading(layers), failures=analysis.source_only, notes=analysis.notes,
                   lines=report.line)
    log["runs"][0].setdefault("properties", {})["suppressed"] = dict(report.suppressed)
    return json.dumps(log, indent=2)


def _html(report: Report, style: Style) -> str:
    def source(path: str) -> tuple[str, ...]:
        return tuple(report.sources.get(path, ()))

    if report.command == "profile":
        from cudalens.report.profile_html import render_html as profile_html

        return profile_html(report.to_dict(), source)
    from cudalens.report.html import render_html

    title = "cudalens check" if report.command == "check" else "cudalens report"
    return render_html(report.guided_document(), title=title, source=source)


def _frames(report: Report, style: Style) -> Callable[[str], Sequence[str]] | None:
    """Path -> its lines, for --show-source: the analysis' own text of each analysed file, else the
    lines the report carries."""
    if not style.show_source or report.analysis is None:
        return None
    texts = {fa.model.path: fa.model.text.splitlines() for fa in report.analysis.files}

    def lines(path: str) -> Sequence[str]:
        return texts[path] if path in texts else report.sources.get(path, ())
    return lines


def _one_line(fmt: str):  # concise | github
    def emitter(report: Report, style: Style) -> str:
        from cudalens.report.concise import by_place, concise_lines, failure_github_lines, failure_lines, github_lines

        analysis = report.analysis
        assert analysis is not None
        ranked = list(report.ranked)
        failed = (failure_lines if fmt == "concise" else failure_github_lines)(analysis.source_only)
        lines = (concise_lines if fmt == "concise" else github_lines)(ranked)
        source = _frames(report, style)
        if source is not None and fmt == "concise":
            lines = with_frames(lines, by_place(ranked), source)
        return "\n".join([*failed, *lines])
    return emitter


def _statistics(report: Report, style: Style) -> str:
    from cudalens.report.quiet import statistics_lines

    return "\n".join(statistics_lines(report.findings))


def _text(report: Report, style: Style) -> str:
    if report.command == "check":
        return _summary(report, style)
    from cudalens.report.console import report_console

    buf = io.StringIO()
    console = report_console(buf, terminal=style.terminal)
    if report.command == "profile":
        from cudalens.report.profile_terminal import render_profile

        render_profile(report.to_dict(), console)
        return buf.getvalue()
    from cudalens.report.terminal import render_analysis, render_guided

    notes = report.evidence.notes if style.to_file and report.evidence is not None else ()
    render_analysis(report.analysis, console, findings=list(report.ranked), source=_frames(report, style))
    render_guided(report.guided, console, notes=notes)  # on standard output, the notes went to stderr
    return buf.getvalue()


def _summary(report: Report, style: Style) -> str:
    """``check``'s text: a summary per file; findings left out by triage are counted, never listed."""
    from cudalens.report.quiet import summary_lines
    from cudalens.triage import Triaged

    lines = summary_lines(report.analysis, style.show_all, _frames(report, style))
    triaged = Triaged((), dict(report.suppressed))
    if triaged.suppressed_total:
        lines[-1] += f"; {triaged.summary()}"
    return "\n".join(lines)


_EMITTERS = {"json": _json, "sarif": _sarif, "html": _html, "text": _text, "concise": _one_line("concise"),
             "github": _one_line("github"), "statistics": _statistics}
_PROFILE_FORMATS = ("json", "sarif", "html", "text")
