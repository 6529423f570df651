"""The one compile of a translation unit (or of a header through one), shared by the per-file
stages (:mod:`cudalens.pipeline.stages`) and the many-file scheduler (:mod:`cudalens.pipeline.batch`).
A compile that fails is a note and a source-only analysis, never an error; a bad input is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from cudalens.errors import InputError, what_failed


def compile_one(path: str, cc: str, defines: Mapping[str, Any], build: Any = None,
             through: str | None = None, instantiate: tuple[str, ...] = ()) -> tuple[Any | None, list[str]]:
    try:
        from cudalens.compiled import compile_file
    except Exception as exc:  # noqa: BLE001 - the compiled layer is optional
        return None, [f"compiled layer unavailable ({what_failed(exc)}); source-only analysis"]
    try:
        flags = build.nvcc_flags(through or path) if build is not None else ()
        result = compile_file(path, cc, {k: str(v) for k, v in defines.items()}, flags,  # defines already filtered
                              through=through, instantiate=instantiate)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - ToolchainError, CompileError: continue source-only
        return None, [f"not compiled ({what_failed(exc)}); source-only analysis"]
    return result, []


def forced_macros(build: Any, path: str | Path) -> tuple[tuple[str, str], ...]:
    """The build's ``-D`` macros for ``path``, which win over the file's ``#ifndef`` defaults."""
    return build.forced_macros(path) if build is not None else ()
