"""Triage options from the command line or the Python API, with the ``[tool.cudalens]`` keys
``select``, ``ignore``, ``min-impact`` and ``baseline`` as defaults (an explicit value replaces the
config's); and writing a baseline."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from cudalens.errors import InputError
from cudalens.findings import Finding

CONFIG_KEYS = ("select", "ignore", "min-impact", "baseline")


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
    from cudalens.rules.validation import VALIDATION_RULES
    from cudalens.triage import TriageOptions
    from cudalens.triage.baseline import load_baseline
    from cudalens.triage.select import validate

    cfg = _config(paths)
    where = cfg.get("__file__", "pyproject.toml")
    known = set(load_all()) | set(VALIDATION_RULES)
    try:
        sel = validate(select or _listed(cfg.get("select"), f"{where}: [tool.cudalens] select"),
                       known, "--select" if select else f"{where}: [tool.cudalens] select")
        ign = validate(ignore or _listed(cfg.get("ignore"), f"{where}: [tool.cudalens] ignore"),
                       known, "--ignore" if ignore else f"{where}: [tool.cudalens] ignore")
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if min_impact is None and cfg.get("min-impact") is not None:
        value = cfg["min-impact"]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise InputError(f"{where}: [tool.cudalens] min-impact must be a number >= 0, got {value!r}")
        min_impact = float(value)
    if min_impact is not None and min_impact < 0:
        raise InputError(f"--min-impact {min_impact}: must be >= 0")
    if baseline is None and cfg.get("baseline"):
        baseline = os.path.join(os.path.dirname(cfg.get("__file__", "./x")), str(cfg["baseline"]))
    try:
        base = load_baseline(baseline) if baseline else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return TriageOptions(select=sel, ignore=ign, baseline=base, min_impact=min_impact)


def write_baseline(path: str, findings: Iterable[Finding], texts: Mapping[str, str] | None = None) -> None:
    from cudalens.triage import SourceLines, fingerprints
    from cudalens.triage.baseline import baseline_document

    doc = baseline_document(fingerprints(findings, SourceLines(dict(texts or {}))))
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
    except OSError as exc:
        raise InputError(f"--write-baseline {path}: cannot write ({exc.strerror})") from None
