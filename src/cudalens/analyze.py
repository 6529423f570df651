"""The `cudalens analyze` pipeline: parse -> access model -> (compile) -> rules -> sorted findings.

Pure library code: it returns an :class:`Analysis` and never prints. The compiled layer is used
when ``cudalens.compiled`` is importable and a toolchain is present; if it is missing or fails,
the analysis continues source-only and says so in ``notes``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from cudalens.access.model import analyze_model
from cudalens.errors import InputError
from cudalens.findings import Finding, Priority, sort_findings
from cudalens.source.model import SourceModel
from cudalens.source.parse import parse_file

SCHEMA = "cudalens/analysis-1"


@dataclass(frozen=True)
class FileAnalysis:
    """Everything established for one file."""

    model: SourceModel
    compiled: Any | None  # cudalens.compiled.CompileResult, when compiled
    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Analysis:
    files: tuple[FileAnalysis, ...]
    cc: str = "9.0"
    block: tuple[int, int, int] | None = None
    defines: dict[str, Any] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return sort_findings([f for fa in self.files for f in fa.findings])

    def at_or_above(self, priority: Priority) -> list[Finding]:
        return [f for f in self.findings if f.priority.rank <= priority.rank]

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract ``cudalens/analysis-1`` (keys may be added, never removed)."""
        kernels = []
        for fa in self.files:
            compiled = fa.compiled.kernels if fa.compiled is not None else {}
            for k in fa.model.kernels:
                entry: dict[str, Any] = {
                    "name": k.name,
                    "file": k.file,
                    "line": k.line,
                    "block": list(k.block_dims) if k.block_dims else None,
                    "accesses": [_access_dict(a) for a in k.accesses],
                    "branches": [b.to_dict() for b in k.branches],
                }
                ck = compiled.get(k.name)
                if ck is not None:
                    entry["resources"] = _safe(lambda: ck.resources_dict())
                    entry["sass"] = _safe(lambda: dict(ck.sass_counts))
                    entry["occupancy"] = _safe(lambda: ck.to_dict().get("occupancy"))
                kernels.append(entry)
        return {
            "schema": SCHEMA,
            "cc": self.cc,
            "block": list(self.block) if self.block else None,
            "defines": {k: v for k, v in self.defines.items()},
            "files": [{"path": fa.model.path, "problems": list(fa.model.problems), "notes": list(fa.notes),
                       "compiled": fa.compiled is not None} for fa in self.files],
            "kernels": kernels,
            "findings": [_finding_dict(f) for f in self.findings],
        }


def _safe(fn: Any) -> Any:
    try:
        return fn()
    except Exception:  # noqa: BLE001
        return None


def _access_dict(a: Any) -> dict[str, Any]:
    d = a.to_dict()
    d["assumptions"] = list(a.assumptions)
    if a.reuse is not None:
        d["reuse"] = a.reuse
    return d


def _finding_dict(f: Finding) -> dict[str, Any]:
    d = f.to_dict()
    # the contract's keys first, in its order, then the additions
    head = {k: d[k] for k in ("rule", "priority", "section", "kernel", "file", "line", "message", "fix")}
    head.update({k: v for k, v in d.items() if k not in head})
    return head


def _compile(path: str, cc: str, defines: Mapping[str, Any]) -> tuple[Any | None, list[str]]:
    try:
        from cudalens.compiled import compile_file
    except Exception as exc:  # noqa: BLE001 - the compiled layer is optional
        return None, [f"compiled layer unavailable ({type(exc).__name__}); source-only analysis"]
    try:
        result = compile_file(path, cc, {k: str(v) for k, v in defines.items()})
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - ToolchainError, CompileError: continue source-only
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, [f"not compiled ({type(exc).__name__}: {msg}); source-only analysis"]
    return result, []


def analyze_file(path: str | Path, *, block: tuple[int, int, int] | None = None,
                 defines: Mapping[str, Any] | None = None, cc: str = "9.0", compile: bool = True) -> FileAnalysis:
    from cudalens.rules.context import AnalysisContext
    from cudalens.rules.registry import run_rules

    defines = dict(defines or {})
    model = analyze_model(parse_file(path), block=block, defines=defines)
    notes: list[str] = []
    compiled = None
    if compile:
        compiled, notes = _compile(str(path), cc, defines)
    launch = {}
    for site in model.launch_sites:
        launch.setdefault(site.kernel, {"block": site.block_dims, "grid": site.grid_dims, "smem": site.shared_mem,
                                        "line": site.line})
    ctx = AnalysisContext(source=model, cc=cc, compiled=dict(compiled.kernels) if compiled is not None else None,
                          launch=launch)
    findings, problems = run_rules(ctx)
    if compiled is not None:
        try:
            from cudalens.compiled import confirm_source_findings

            findings = list(confirm_source_findings(findings, compiled))
        except Exception as exc:  # noqa: BLE001
            notes.append(f"could not confirm findings against the compiled code ({type(exc).__name__})")
    notes.extend(problems)
    model = dataclasses.replace(model, problems=model.problems)
    return FileAnalysis(model, compiled, tuple(sort_findings(findings)), tuple(notes))


def analyze(paths: list[str], *, block: tuple[int, int, int] | None = None, defines: Mapping[str, Any] | None = None,
            cc: str = "9.0", compile: bool = True) -> Analysis:
    """Analyze every file; a non-CUDA file raises InputError naming it."""
    if not paths:
        raise InputError("no file given")
    files = tuple(analyze_file(p, block=block, defines=defines, cc=cc, compile=compile) for p in paths)
    return Analysis(files, cc, block, dict(defines or {}))
