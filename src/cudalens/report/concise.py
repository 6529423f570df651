"""One line per finding, for editors, CI problem matchers and grep.

``concise``: ``path:line:col: RULE [priority] message`` (ruff's and compilers' shape; a finding
with no line gives ``path:1:1``). ``github``: GitHub Actions workflow commands
(``::error file=...,line=...,col=...,title=...::message``), which the runner turns into annotations
on the pull request. Paths are relative to ``root`` where the file lies under it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from cudalens.findings import Finding, Priority

_GITHUB_LEVEL = {Priority.HIGH: "error", Priority.MEDIUM: "warning", Priority.MEDIUM_LOW: "warning",
                 Priority.LOW: "notice", Priority.INFO: "notice"}


def display_path(path: str, root: str = ".") -> str:
    """``path`` relative to ``root`` when it lies under it, else as given; '/' separators."""
    if not path:
        return "-"
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:
        rel = path
    out = path if rel.startswith("..") else rel
    return out.replace(os.sep, "/")


def concise_line(f: Finding, root: str = ".") -> str:
    return (f"{display_path(f.file, root)}:{f.line or 1}:{f.column or 1}: {f.rule} [{f.priority.value}] "
            f"{_one_line(f.message)}")


def by_place(findings: Iterable[Finding]) -> list[Finding]:
    """File, line and column order (as compilers and ruff print)."""
    return sorted(findings, key=lambda f: (f.file or "", f.line or 0, f.column or 0, f.rule))


def concise_lines(findings: Iterable[Finding], root: str = ".") -> list[str]:
    return [concise_line(f, root) for f in by_place(findings)]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(findings: Iterable[Finding], root: str = ".") -> list[str]:
    out = []
    for f in by_place(findings):
        props = [f"file={_escape_property(display_path(f.file, root))}", f"line={f.line or 1}"]
        if f.column:
            props.append(f"col={f.column}")
        props.append(f"title={_escape_property(f'cudalens {f.rule} [{f.priority.value}]')}")
        message = f"{_one_line(f.message)} Fix: {_one_line(f.fix)}"
        out.append(f"::{_GITHUB_LEVEL[f.priority]} {','.join(props)}::{_escape_data(message)}")
    return out


def _failure_place(failure: Any, root: str) -> tuple[str, int]:
    """Where a compile failure is shown: the compiler's first error, else the analysed file's line 1."""
    return display_path(failure.file or failure.path, root), failure.line or 1


def failure_lines(failures: Iterable[Any], root: str = ".") -> list[str]:
    """One ``path:line:1: compile-error [source-only] FILE: message`` line per file analysed source-only
    (a :class:`cudalens.pipeline.compile_failure.CompileFailure` each)."""
    out = []
    for f in failures:
        path, line = _failure_place(f, root)
        out.append(f"{path}:{line}:1: compile-error [source-only] {display_path(f.path, root)}: {_one_line(f.message())}")
    return out


def failure_github_lines(failures: Iterable[Any], root: str = ".") -> list[str]:
    """One workflow ``::warning`` per file analysed source-only, at the compiler's first error."""
    out = []
    for f in failures:
        path, line = _failure_place(f, root)
        props = [f"file={_escape_property(path)}", f"line={line}",
                 f"title={_escape_property(f'cudalens compile-error: {display_path(f.path, root)} analysed source-only')}"]
        out.append(f"::warning {','.join(props)}::{_escape_data(_one_line(f.message()))}")
    return out
