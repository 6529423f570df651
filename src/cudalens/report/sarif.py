"""SARIF 2.1.0 output, so code-review tools (GitHub code scanning and others) can ingest findings.

Levels: high -> error, medium and medium-low -> warning, low and info -> note. Locations are
relative to a source root given by the caller (``%SRCROOT%``: by default the repository holding
the working directory, else the working directory), so the log is portable and names no local
absolute path. Each result carries ``partialFingerprints`` (the baseline fingerprint: rule, kernel,
file name and normalized line text), so code-scanning tools track a finding across edits.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from cudalens._version import __version__
from cudalens.findings import Finding, Priority

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_LEVEL = {
    Priority.HIGH: "error",
    Priority.MEDIUM: "warning",
    Priority.MEDIUM_LOW: "warning",
    Priority.LOW: "note",
    Priority.INFO: "note",
}


def _first_paragraph(doc: str) -> str:
    """The text under "What it does" (or the first paragraph) of a rule's documentation."""
    lines = doc.strip().splitlines()
    out: list[str] = []
    started = False
    for line in lines:
        stripped = line.strip()
        if stripped.lower().startswith("what it does"):
            started = True
            continue
        if started:
            if not stripped and out:
                break
            if stripped and not set(stripped) <= set("-="):
                out.append(stripped)
    if not out:
        out = [lines[0].strip()] if lines else [""]
    return " ".join(out)


def _rule_descriptor(rule_id: str, spec: Any | None) -> dict[str, Any]:
    if spec is None:
        return {"id": rule_id, "name": rule_id, "shortDescription": {"text": rule_id}}
    return {
        "id": rule_id,
        "name": "".join(word.capitalize() for word in spec.name.replace("-", " ").split()) or rule_id,
        "shortDescription": {"text": spec.name},
        "fullDescription": {"text": _first_paragraph(spec.doc)},
        "help": {"text": spec.doc},
        "defaultConfiguration": {"level": _LEVEL[spec.priority]},
        "properties": {"priority": spec.priority.value, "section": spec.section, "layers": spec.layers},
    }


def repository_root(start: str = ".") -> str:
    """The nearest directory at or above ``start`` holding ``.git``; ``start`` itself when none."""
    here = os.path.abspath(start)
    probe = here
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def _uri(path: str, root: str) -> str:
    """``path`` relative to ``root`` ('/' separators); never an absolute local path."""
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:  # another drive on Windows: the path as given, without its drive
        rel = os.path.splitdrive(path)[1].lstrip("\\/")
    return rel.replace(os.sep, "/")


def _no_text(path: str, number: int | None) -> str:
    return ""


def to_sarif(findings: Iterable[Finding], rules: dict[str, Any], root: str | None = None,
             failures: Iterable[Any] = (), notes: Iterable[str] = (),
             lines: Callable[[str, int | None], str] = _no_text) -> dict[str, Any]:
    """Build one SARIF log (a dict ready for json.dump) with one run of cudalens.

    ``root``: the directory URIs are relative to (default :func:`repository_root` of the working
    directory). ``failures``: files analysed source-only (``CompileFailure``), one ``warning``
    result each at the compiler's first error (rule ``compile-error``). ``notes``: what limited the
    analysis as a whole (the project's launch resolution stopped), one ``toolExecutionNotifications``
    entry each. ``lines``: (path, line number) -> the text of that line (a finding's column and
    fingerprint are read from it; :meth:`cudalens.pipeline.report.Report.line`): the log is made
    from what the report carries, no file is read here."""
    from cudalens.triage import locate_column
    from cudalens.triage.baseline import fingerprint

    root = repository_root() if root is None else root
    findings = list(findings)
    used = sorted({f.rule for f in findings} | set(rules))
    index = {rule_id: i for i, rule_id in enumerate(used)}
    results = []
    for f in findings:
        region: dict[str, Any] = {"startLine": f.line} if f.line else {}
        text = lines(f.file, f.line)
        column = f.column or (locate_column(f, text) if f.line else None)
        if column:
            region["startColumn"] = column
        location: dict[str, Any] = {
            "physicalLocation": {
                "artifactLocation": {"uri": _uri(f.file, root), "uriBaseId": "%SRCROOT%"},
                **({"region": region} if region else {}),
            }
        }
        if f.kernel:
            location["logicalLocations"] = [{"name": f.kernel, "kind": "function"}]
        properties: dict[str, Any] = {"priority": f.priority.value, "section": f.section, "status": f.status}
        if f.impact is not None:
            properties["impact"] = f.impact
            properties["impactText"] = f.impact_text
        if f.speedup is not None:
            properties["estimatedSpeedup"] = f.speedup.speedup
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": _LEVEL[f.priority],
                "message": {"text": f"{f.message} Fix: {f.fix}"},
                "locations": [location],
                "partialFingerprints": {"cudalensFingerprint/v1": fingerprint(f, text)},
                "properties": properties,
            }
        )
    failed = [_failure_result(f, root, len(used)) for f in failures]
    results += failed
    descriptors = [*(_rule_descriptor(r, rules.get(r)) for r in used), *([COMPILE_RULE] if failed else [])]
    told = [{"level": "warning", "message": {"text": n}} for n in notes]
    invocations = [{"executionSuccessful": True, "toolExecutionNotifications": told}] if told else []
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "cudalens",
                        "version": __version__,
                        "rules": descriptors,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"description": {
                    "text": "the repository root (or working directory) cudalens ran in"}}},
                "results": results,
                **({"invocations": invocations} if invocations else {}),
            }
        ],
    }


#: The descriptor of the results that say a file was analysed source-only (it did not compile).
COMPILE_RULE: dict[str, Any] = {
    "id": "compile-error", "name": "CompileError",
    "shortDescription": {"text": "file analysed source-only: it did not compile"},
    "fullDescription": {"text": "The file did not compile with the flags cudalens had, so the figures of the compiled "
                                "code (PTX access model, resources, SASS) are missing and only the source model ran."},
    "defaultConfiguration": {"level": "warning"},
}


def _failure_result(f: Any, root: str, index: int) -> dict[str, Any]:
    region = {"startLine": f.line} if f.line else {"startLine": 1}
    return {
        "ruleId": COMPILE_RULE["id"], "ruleIndex": index, "level": "warning",
        "message": {"text": f.message()},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(f.file or f.path, root),
                                                                 "uriBaseId": "%SRCROOT%"}, "region": region}}],
        "properties": {"analysedFile": _uri(f.path, root), "missing": f.missing, "kind": f.kind},
    }
