"""The stages of one file's analysis: parse -> model -> compile -> join -> rules -> confirm -> rank.

Pure library code: it returns a :class:`~cudalens.pipeline.analysis.FileAnalysis` and never
prints. The compiled layer is used when ``cudalens.compiled`` is importable and a toolchain is
present; if it is missing or fails, the analysis continues source-only and says so in ``notes``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping

from cudalens.access.model import analyze_model
from cudalens.errors import InputError, what_failed
from cudalens.findings import sort_findings
from cudalens.hardware.table import limits
from cudalens.pipeline.analysis import Analysis, FileAnalysis
from cudalens.pipeline.confirm import confirm_source_findings
from cudalens.pipeline.defines import compiler_defines
from cudalens.pipeline.isolated import mark
from cudalens.pipeline.join import join, joined_model
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import run_rules
from cudalens.source.limits import Budget
from cudalens.source.parse import parse_file
from cudalens.triage.impact import estimate


def _compile(path: str, cc: str, defines: Mapping[str, Any], build: Any = None,
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


def analyze_file(path: str | Path, *, block: Any = None,
                 defines: Mapping[str, Any] | None = None, cc: str = "9.0", compile: bool = True,
                 build: Any = None, compiled_outcome: tuple[Any | None, list[str]] | None = None,
                 instantiate: tuple[str, ...] = (), worker: Any = None, launches: Any = None,
                 elsewhere: frozenset[str] = frozenset()) -> FileAnalysis:
    """``build``: a :class:`cudalens.project.BuildContext` (include folders, flags; the macros of
    the project headers the file includes reach the source model). ``compiled_outcome``: the
    (result, notes) of :func:`_compile` when the caller compiled the file already.
    ``instantiate``: template kernels to instantiate in the compiled unit (``gemm<128,128,8>``).
    ``worker``: a second process for the compiled access model (pipeline.model_workers).
    ``launches``: the project's :class:`~cudalens.project.resolve.LaunchTable` (default: this
    file's own launches). ``elsewhere``: kernels another analysed file defines (a ``.cu`` this unit
    includes): their compiled facts are reported with that file, once."""
    cc = limits(cc).cc  # an unknown compute capability is an InputError naming the known ones
    defines = dict(defines or {})
    predefined = tuple(build.header_macros(path).items()) if build is not None else ()
    budget = Budget()  # one time and memory budget for the file's front end and models
    from cudalens.pipeline.batch import _forced

    mark("parse")
    parsed = parse_file(path, predefined, budget, _forced(build, path))
    mark("model")
    model = analyze_model(parsed, block=block, defines=defines, budget=budget, launches=launches)
    notes: list[str] = []
    compiled = None
    if compile:
        compiled, notes = compiled_outcome or _compile(str(path), cc, compiler_defines(model, defines), build,
                                                       instantiate=instantiate)
        notes = list(notes)
        plain = sorted({k.name for k in model.kernels if not k.is_template})
        if compiled is not None and plain and not compiled.kernels:  # e.g. a macro that swallowed the #include
            compiled = None
            notes.append(f"not compiled (compile error: the compile produced none of the file's kernels "
                         f"({', '.join(plain[:3])}{' ...' if len(plain) > 3 else ''})); source-only analysis")
    evals: dict[str, Any] = {}
    if compiled is not None:  # the access model on the compiled PTX; the source model stays the fallback
        mark("compiled model")
        from cudalens.pipeline.compiled_access import compiled_access, sass_shared_widths

        flags = tuple(build.nvcc_flags(str(path))) if build is not None else ()
        evals, access_notes = compiled_access(str(path), model, cc, compiler_defines(model, defines), flags,
                                              sass_shared_widths(compiled), ptx=getattr(compiled, "ptx", ""),
                                              worker=worker)
        notes.extend(access_notes)
    kernels = join(model, compiled.kernels if compiled is not None else None, cc, evals)
    model = joined_model(model, kernels)  # the compiled figures where the source model had none
    mine = {n: ck for n, ck in compiled.kernels.items() if ck.name not in elsewhere} if compiled is not None else None
    ctx = RuleContext(source=model, cc=cc, compiled=mine)
    mark("rules")
    findings, problems = run_rules(ctx)
    if compiled is not None:
        try:
            findings = list(confirm_source_findings(findings, compiled))
        except Exception as exc:  # noqa: BLE001
            notes.append(f"could not confirm findings against the compiled code ({what_failed(exc)})")
    notes.extend(problems)
    mark("report")
    findings = estimate(findings, model)  # runs per thread, and priorities the guide leaves to the cost
    return FileAnalysis(model, compiled, tuple(sort_findings(findings)), tuple(notes), kernels)


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
    from cudalens.pipeline.batch import analyze_files

    files, failed = analyze_files(list(paths), block=block, defines=dict(defines or {}), cc=cc, compile=compile,
                                  build=build, jobs=jobs, keep_going=keep_going, progress=progress,
                                  instantiate=tuple(instantiate), file_limits=file_limits, project=project,
                                  cache=cache)
    if binary is not None and files:
        files[0] = binary_findings(files[0], binary, cc)
    return Analysis(tuple(files), cc, block, dict(defines or {}), tuple(failed))


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
