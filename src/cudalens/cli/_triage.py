"""Options `analyze` and `check` share for choosing what to report: --select/--ignore, --baseline,
--write-baseline, --min-impact, --fail-on; and the one-line formats (concise, github).

The config's ``[tool.cudalens]`` keys ``select``, ``ignore``, ``min-impact`` and ``baseline`` give
the defaults; an option on the command line replaces the config's value.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import click

from cudalens.errors import InputError
from cudalens.findings import Finding, Priority

FAIL_ON = ["high", "medium", "medium-low", "low", "info"]
CONFIG_KEYS = ("select", "ignore", "min-impact", "baseline")


def triage_options(fn: Callable) -> Callable:
    """Decorate a click command with the selection and baseline options."""
    options = [
        click.option("--select", "select", multiple=True, metavar="RULES",
                     help="Report only these rules: ids or chapter prefixes, comma-separated (e.g. G,SH1). "
                          "Default: [tool.cudalens] select, else every rule."),
        click.option("--ignore", "ignore", multiple=True, metavar="RULES",
                     help="Leave out these rules (ids or chapter prefixes, e.g. Y1,I17). The more specific of "
                          "--select and --ignore wins."),
        click.option("--baseline", "baseline", default=None, metavar="FILE",
                     help="Report (and fail on) only findings not in this baseline (see --write-baseline)."),
        click.option("--write-baseline", "write_baseline", default=None, metavar="FILE",
                     help="Write today's findings to FILE as a baseline, then report as usual."),
        click.option("--min-impact", "min_impact", type=float, default=None, metavar="SCORE",
                     help="Leave out findings whose estimated impact score (cost share x runs per thread) is "
                          "below SCORE; findings without an estimate are kept."),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return fn


def fail_on_option(fn: Callable) -> Callable:
    return click.option("--fail-on", type=click.Choice(FAIL_ON), default=None,
                        help="Exit 1 when findings at or above this priority exist (info: any finding).")(fn)


def _config(paths: Iterable[str]) -> Mapping[str, Any]:
    """The ``[tool.cudalens]`` table that applies to ``paths`` ({} when there is none), with
    ``__file__`` naming the file it came from (discovery: :mod:`cudalens.project.config`)."""
    from cudalens.project.config import load_config

    return load_config(list(paths) or ["."]).raw


def _listed(value: Any, origin: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InputError(f"{origin}: expected a list of rule ids or chapter prefixes, got {value!r}")


def build_options(paths: Iterable[str], select: tuple[str, ...], ignore: tuple[str, ...], baseline: str | None,
                  min_impact: float | None) -> Any:
    """TriageOptions from the command line, with the config's values where an option is not given."""
    from cudalens.rules.registry import load_all
    from cudalens.triage import TriageOptions
    from cudalens.triage.baseline import load_baseline
    from cudalens.triage.select import validate

    cfg = _config(paths)
    where = cfg.get("__file__", "pyproject.toml")
    known = set(load_all())
    try:
        sel = validate(select or _listed(cfg.get("select"), f"{where}: [tool.cudalens] select"),
                       known, "--select" if select else f"{where}: [tool.cudalens] select")
        ign = validate(ignore or _listed(cfg.get("ignore"), f"{where}: [tool.cudalens] ignore"),
                       known, "--ignore" if ignore else f"{where}: [tool.cudalens] ignore")
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if min_impact is None and cfg.get("min-impact") is not None:
        value = cfg["min-impact"]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < float("inf"):
            raise InputError(f"{where}: [tool.cudalens] min-impact must be a number >= 0, got {value!r}")
        min_impact = float(value)
    if min_impact is not None and not 0 <= min_impact < float("inf"):
        raise InputError(f"--min-impact {min_impact}: must be a finite number >= 0")
    if baseline is None and cfg.get("baseline"):
        baseline = os.path.join(os.path.dirname(cfg.get("__file__", "./x")), str(cfg["baseline"]))
    try:
        base = load_baseline(baseline) if baseline else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return TriageOptions(select=sel, ignore=ign, baseline=base, min_impact=min_impact)


def write_baseline(path: str, findings: Iterable[Finding], texts: Mapping[str, str] | None = None) -> None:
    from cudalens.textio import write_atomic
    from cudalens.triage import SourceLines, fingerprints
    from cudalens.triage.baseline import baseline_document

    doc = baseline_document(fingerprints(findings, SourceLines(dict(texts or {}))))
    try:
        write_atomic(path, json.dumps(doc, indent=1) + "\n")
    except OSError as exc:
        raise InputError(f"--write-baseline {path}: cannot write ({exc.strerror})") from None


def refuse_clobber_all(inputs: list[str], output: str | None, baseline_out: str | None) -> None:
    """InputError when -o or --write-baseline would write over an analysed file or any source file."""
    from cudalens.textio import refuse_clobber

    try:
        if output:
            refuse_clobber(output, inputs, "-o")
        if baseline_out:
            refuse_clobber(baseline_out, inputs, "--write-baseline")
    except ValueError as exc:
        raise InputError(str(exc)) from None


def fails(findings: Iterable[Finding], threshold: str | None) -> bool:
    if not threshold:
        return False
    limit = Priority.parse(threshold).rank
    return any(f.priority.rank <= limit for f in findings)
