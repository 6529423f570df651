"""What an analysis established: per file, the source model, the compiled facts, the kernel
records (their join) and the findings; serialized to the JSON contract ``cudalens/analysis-1``.

``to_dict`` only serializes: every fact it writes was established by a pipeline stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cudalens.compiled.model import CompileResult
from cudalens.evidence.join import KernelRecord
from cudalens.findings import Finding, Priority, sort_findings
from cudalens.pipeline.compile_failure import CompileFailure
from cudalens.source.model import SourceModel

SCHEMA = "cudalens/analysis-1"


@dataclass(frozen=True)
class FileAnalysis:
    """Everything established for one file."""

    model: SourceModel
    compiled: CompileResult | None  # when compiled
    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()
    kernels: tuple[KernelRecord, ...] = ()  # the join of source and compiled facts, one per kernel
    failure: CompileFailure | None = None  # why the file was analysed source-only (compile asked for, failed)
    # the kernel records as the JSON document writes them (kernels_json), where ``kernels`` was left
    # out of a stored analysis read for --format json (pipeline.result_cache); None: render ``kernels``
    kernels_json: tuple[str, ...] | None = field(default=None, repr=False, compare=False)

    @property
    def compile_error(self) -> str | None:
        """The compiler's first error when the file did not compile (None otherwise)."""
        if self.failure is None or self.failure.kind == "toolchain":
            return None
        f = self.failure
        where = f"{f.file}:{f.line}: " if f.file and f.line else (f"{f.file}: " if f.file else "")
        return f"{where}error: {f.error}"


@dataclass(frozen=True)
class Analysis:
    files: tuple[FileAnalysis, ...]
    cc: str = "9.0"
    block: Any = None  # --block: (x, y, z) for every kernel, or {kernel (None: the others): (x, y, z)}
    defines: dict[str, Any] = field(default_factory=dict)
    failed: tuple[tuple[str, str], ...] = ()  # (path, one-line reason) of files that could not be analyzed
    notes: tuple[str, ...] = ()  # one line per limit the analysis as a whole met (the launch resolution stopped)

    @property
    def source_only(self) -> list[CompileFailure]:
        """Why each file that was to be compiled was analysed source-only (one per such file)."""
        return [fa.failure for fa in self.files if fa.failure is not None]

    @property
    def findings(self) -> list[Finding]:
        return sort_findings([f for fa in self.files for f in fa.findings])

    def at_or_above(self, priority: Priority) -> list[Finding]:
        return [f for f in self.findings if f.priority.rank <= priority.rank]

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract ``cudalens/analysis-1`` (keys may be added, never removed)."""
        kernels = [rec.to_dict() for fa in self.files for rec in fa.kernels]
        launches = self.launches()  # once: every finding looks its launch up in it
        return {
            "schema": SCHEMA,
            "cc": self.cc,
            "block": (list(self.block) if isinstance(self.block, tuple) else
                      {str(k or "*"): list(v) for k, v in self.block.items()} if self.block else None),
            "defines": {k: v for k, v in self.defines.items()},
            "files": [{"path": fa.model.path, "problems": list(fa.model.problems), "notes": list(fa.notes),
                       "compiled": fa.compiled is not None, "compile_error": fa.compile_error,
                       "compile_failure": fa.failure.to_dict() if fa.failure is not None else None}
                      for fa in self.files],
            "source_only": len(self.source_only),
            "failed": [{"path": p, "error": e} for p, e in self.failed],
            "notes": list(self.notes),
            "kernels": kernels,
            "findings": [_finding_dict(f, launches) for f in self.findings],
        }

    def launches(self) -> dict[tuple[str, str], Any]:
        """(file, kernel name) -> the launch its figures were evaluated under."""
        out: dict[tuple[str, str], Any] = {}
        for fa in self.files:
            for k in fa.model.kernels:
                if k.launch is not None:
                    out[(fa.model.path, k.name)] = k.launch
                    out.setdefault(("", k.name), k.launch)  # a finding on a launch in another file
        return out


def json_default(obj: Any) -> Any:
    """What the JSON document writes for a value ``json`` cannot: a set sorted, a fact its ``to_dict()``."""
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    return str(obj)


def kernels_json(fa: FileAnalysis) -> tuple[str, ...]:
    """Each kernel record of ``fa`` as the JSON document writes it, at the top level (indent 2)."""
    from cudalens import json_text

    if fa.kernels_json is not None:
        return fa.kernels_json
    return tuple(json_text.dumps(rec.to_dict(), 2, json_default) for rec in fa.kernels)


def _finding_dict(f: Finding, launches: dict[tuple[str, str], Any] | None = None) -> dict[str, Any]:
    d = f.to_dict()
    # the contract's keys first, in its order, then the additions
    head = {k: d[k] for k in ("rule", "priority", "section", "kernel", "file", "line", "message", "fix")}
    head.update({k: v for k, v in d.items() if k not in head})
    launch = ((launches or {}).get((f.file or "", f.kernel)) or (launches or {}).get(("", f.kernel))) if f.kernel else None
    if launch is not None:
        head["launch"] = {"origin": launch.origin, "from": launch.describe(), "site": launch.site}
    return head
