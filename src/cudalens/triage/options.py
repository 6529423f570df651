"""Triage options from the command line or the Python API, with the ``[tool.cudalens]`` keys
``select``, ``ignore``, ``min-impact`` and ``baseline`` as defaults (an explicit value replaces the
config's); and writing a baseline."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from cudalens.errors import InputError
from cudalens.findings import Finding, Priority

CONFIG_KEYS = ("select", "ignore", "min-priority", "min-impact", "baseline")
FAIL_ON = ("high", "medium", "medium-low", "low", "info")


def _listed(value: Any, origin: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InputError(f"{origin}: expected a list of rule ids or chapter prefixes, got {value!r}")


def build_options(config: Any, select: tuple[str, ...], ignore: tuple[str, ...], baseline: str | None,
                  min_impact: float | None, min_priority: str | None = None) -> Any:
    """TriageOptions from the command line, with the values of ``config`` (a
    :class:`cudalens.project.config.Config`, loaded once per run) where an option is not given."""
    from cudalens.rules.registry import load_all
    from cudalens.triage import TriageOptions
    from cudalens.triage.baseline import load_baseline
    from cudalens.triage.select import validate

    cfg = config.raw
    where = cfg.get("__file__", "pyproject.toml")
    chosen = select or _listed(cfg.get("select"), f"{where}: [tool.cudalens] select")
    left_out = ignore or _listed(cfg.get("ignore"), f"{where}: [tool.cudalens] ignore")
    known = set(load_all()) if chosen or left_out else set()  # (no rule module imported for nothing)
    try:
        sel = validate(chosen, known, "--select" if select else f"{where}: [tool.cudalens] select")
        ign = validate(left_out, known, "--ignore" if ignore else f"{where}: [tool.cudalens] ignore")
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if min_impact is None and cfg.get("min-impact") is not None:
        value = cfg["min-impact"]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < float("inf"):
            raise InputError(f"{where}: [tool.cudalens] min-impact must be a number >= 0, got {value!r}")
        min_impact = float(value)
    if min_impact is not None and not 0 <= min_impact < float("inf"):
        raise InputError(f"--min-impact {min_impact}: must be a finite number >= 0")
    if min_priority is None and cfg.get("min-priority") is not None:
        value = cfg["min-priority"]
        if value not in FAIL_ON:
            raise InputError(f"{where}: [tool.cudalens] min-priority must be one of {', '.join(FAIL_ON)}, got {value!r}")
        min_priority = value
    if baseline is None and cfg.get("baseline"):
        baseline = os.path.join(os.path.dirname(cfg.get("__file__", "./x")), str(cfg["baseline"]))
    try:
        base = load_baseline(baseline) if baseline else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return TriageOptions(select=sel, ignore=ign, baseline=base, min_impact=min_impact,
                         min_priority=Priority.parse(min_priority) if min_priority else None)


def write_baseline(path: str, findings: Iterable[Finding], texts: Mapping[str, str] | None = None) -> None:
    from cudalens.textio import write_atomic
    from cudalens.triage import SourceLines, fingerprints
    from cudalens.triage.baseline import baseline_document

    doc = baseline_document(fingerprints(findings, SourceLines(dict(texts or {}))))
    try:
        write_atomic(path, json.dumps(doc, indent=1) + "\n")
    except OSError as exc:
        raise InputError(f"--write-baseline {path}: cannot write ({exc.strerror})") from None
