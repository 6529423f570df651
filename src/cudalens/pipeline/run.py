"""Analysing a list of files: the entry point of the static pipeline (:func:`analyze`), above the
many-file scheduler (:mod:`cudalens.pipeline.batch`) and the per-file stages
(:mod:`cudalens.pipeline.stages`), plus the findings on a built binary (rule Y3).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping

from cudalens.errors import InputError
from cudalens.findings import sort_findings
from cudalens.hardware.table import limits
from cudalens.pipeline.analysis import Analysis, FileAnalysis
from cudalens.pipeline.batch import analyze_files
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import run_rules


def analyze(paths: list[str], *, block: Any = None, defines: Mapping[str, Any] | None = None,
            cc: str = "9.0", compile: bool = True, build: Any = None, jobs: int = 1, keep_going: bool = False,
            progress: Any = None, binary: str | Path | None = None, instantiate: tuple[str, ...] = (),
            file_limits: Any = None, project: Any = None, cache: Any = None) -> Analysis:
    """Analyze every file; a non-CUDA file raises InputError naming it (with ``keep_going``, it is
    listed in ``Analysis.failed`` and the others are analyzed). Compiles run ``jobs`` at a time;
    headers are compiled through a translation unit that includes them (see
    :mod:`cudalens.pipeline.batch`). ``binary``: a built executable, object or library whose
    embedded SASS and PTX are judged against ``cc`` (rule Y3), once for the whole analysis.
    ``instantiate``: template kernels every compiled unit instantiates (``--instantiate``).
    ``file_limits``: each file in a worker with a hard deadline and memory cap (pipeline.isolated).
    ``cache``: a :class:`~cudalens.pipeline.result_cache.ResultCache` (unchanged files read from it)."""
    if not paths:
        raise InputError("no file given")
    files, failed, notes = analyze_files(list(paths), block=block, defines=dict(defines or {}), cc=cc, compile=compile,
                                  build=build, jobs=jobs, keep_going=keep_going, progress=progress,
                                  instantiate=tuple(instantiate), file_limits=file_limits, project=project,
                                  cache=cache)
    if binary is not None and files:
        files[0] = binary_findings(files[0], binary, cc)
    return Analysis(tuple(files), cc, block, dict(defines or {}), tuple(failed), notes)


def binary_findings(fa: FileAnalysis, binary: str | Path, cc: str) -> FileAnalysis:
    """``fa`` with the findings on a built binary's targets (rule Y3) added; a binary that cannot
    be read (no cuobjdump) becomes a note. A missing file is the user's error (InputError)."""
    from cudalens.compiled.fatbin import inspect_binary
    from cudalens.errors import ToolchainError

    try:
        contents = inspect_binary(binary)
    except ToolchainError as exc:
        return dataclasses.replace(fa, notes=(*fa.notes, f"--binary {binary}: not inspected ({exc})"))
    found, problems = run_rules(RuleContext(source=fa.model, cc=limits(cc).cc, binary=contents), only=["Y3"])
    return dataclasses.replace(fa, findings=tuple(sort_findings([*fa.findings, *found])),
                               notes=(*fa.notes, *problems))
