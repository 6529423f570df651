"""The one compile of a translation unit (or of a header through one), shared by the per-file
stages (:mod:`cudalens.pipeline.stages`) and the many-file scheduler (:mod:`cudalens.pipeline.batch`).
A compile that fails is a CompileFailure (the compiler's first error and the fix) and a source-only
analysis, never an error; a bad input is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


def compile_one(path: str, cc: str, defines: Mapping[str, Any], build: Any = None,
                through: str | None = None, instantiate: tuple[str, ...] = (),
                disassembler: Any = None, memo: Any = None) -> tuple[Any | None, list[str]]:
    """(CompileResult, notes); for a file that does not compile, (CompileFailure, notes): see
    :func:`cudalens.pipeline.compile_failure.compile_or_diagnose` (``disassembler``, ``memo``: compile_file's)."""
    from cudalens.pipeline.compile_failure import compile_or_diagnose

    flags = tuple(build.nvcc_flags(through or path)) if build is not None else ()
    searched = tuple(build.search_dirs(through or path)) if build is not None else ()
    return compile_or_diagnose(path, cc, defines, flags, searched, through=through, instantiate=instantiate,
                               disassembler=disassembler, memo=memo)


def forced_macros(build: Any, path: str | Path) -> tuple[tuple[str, str], ...]:
    """The build's ``-D`` macros for ``path``, which win over the file's ``#ifndef`` defaults."""
    return build.forced_macros(path) if build is not None else ()
