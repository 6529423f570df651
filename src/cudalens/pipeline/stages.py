"""The stages of one file's analysis: parse -> model -> compile -> join -> rules -> confirm -> rank.

Pure library code: it returns a :class:`~cudalens.pipeline.analysis.FileAnalysis` and never
prints. The compiled layer is used when ``cudalens.compiled`` is importable and a toolchain is
present; if it is missing or fails, the analysis continues source-only and says so in ``notes``.
"""

from __future__ import annotations

import functools
import importlib
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Mapping

from cudalens.access.model import analyze_model
from cudalens.errors import what_failed
from cudalens.evidence.join import join, joined_model
from cudalens.findings import sort_findings
from cudalens.hardware.table import limits
from cudalens.pipeline.analysis import FileAnalysis
from cudalens.pipeline.compile_failure import CompileFailure
from cudalens.pipeline.compile_step import compile_one as _compile
from cudalens.pipeline.compile_step import forced_macros
from cudalens.pipeline.confirm import confirm_source_findings
from cudalens.pipeline.defines import compiler_defines
from cudalens.pipeline.isolated import mark
from cudalens.pipeline.plausible import assumed_kernels, assumed_kernels_under, hold_for_every_block
from cudalens.real_paths import forget as forget_real_paths
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import run_rules
from cudalens.source.limits import Budget
from cudalens.source.parse import parse_file
from cudalens.triage.impact import estimate


def analyze_file(path: str | Path, *, block: Any = None,
                 defines: Mapping[str, Any] | None = None, cc: str = "9.0", compile: bool = True,
                 build: Any = None, compiled_outcome: tuple[Any | None, list[str]] | Future | None = None,
                 instantiate: tuple[str, ...] = (), worker: Any = None, launches: Any = None,
                 elsewhere: frozenset[str] = frozenset()) -> FileAnalysis:
    """``build``: a :class:`cudalens.project.BuildContext` (include folders, flags; the macros of
    the project headers the file includes reach the source model). ``compiled_outcome``: the
    (result, notes) of :func:`_compile` when the caller compiled the file already (or a Future of
    them: the compile runs while this file's front end and source model do).
    ``instantiate``: template kernels to instantiate in the compiled unit (``gemm<128,128,8>``).
    ``worker``: a second process for the compiled access model (evidence.model_workers).
    ``launches``: the project's :class:`~cudalens.project.resolve.LaunchTable` (default: this
    file's own launches). ``elsewhere``: kernels another analysed file defines (a ``.cu`` this unit
    includes): their compiled facts are reported with that file, once."""
    cc = limits(cc).cc  # an unknown compute capability is an InputError naming the known ones
    forget_real_paths()  # kept for this file's analysis only: a long-lived process sees links change
    defines = dict(defines or {})
    predefined = tuple(build.header_macros(path).items()) if build is not None else ()
    budget = Budget()  # one time and memory budget for the file's front end and models
    mark("parse")
    parsed = parse_file(path, predefined, budget, forced_macros(build, path))
    if launches is not None and launches.partial:  # the project's resolution stopped: this file's own
        launches = launches.own_file(parsed)
    mark("model")
    model = analyze_model(parsed, block=block, defines=defines, budget=budget, launches=launches)
    notes: list[str] = []
    compiled = None
    failure: CompileFailure | None = None
    if compile:
        outcome = compiled_outcome
        if isinstance(outcome, Future):  # compiling while the source model ran
            mark("compile")
            outcome = outcome.result()
        compiled, notes = outcome or _compile(str(path), cc, compiler_defines(model, defines), build,
                                                       instantiate=instantiate)
        notes = list(notes)
        if isinstance(compiled, CompileFailure):
            failure, compiled = compiled, None
        plain = sorted({k.name for k in model.kernels if not k.is_template})
        if compiled is not None and plain and not compiled.kernels:  # e.g. a macro that swallowed the #include
            failure, compiled = CompileFailure(
                str(path), f"the compile produced none of the file's kernels ({', '.join(plain[:3])}"
                f"{' ...' if len(plain) > 3 else ''})",
                "check the -D/--define values: one may continue a line or swallow the #include"), None
            notes.append(f"not compiled (compile error: {failure.error}); source-only analysis")
    evals: dict[str, Any] = {}
    if compiled is not None:  # the access model on the compiled PTX; the source model stays the fallback
        mark("compiled model")
        from cudalens.evidence.compiled_access import compiled_access, sass_shared_widths

        flags = tuple(build.nvcc_flags(str(path))) if build is not None else ()
        evals, access_notes = compiled_access(str(path), model, cc, compiler_defines(model, defines), flags,
                                              sass_shared_widths(compiled), ptx=getattr(compiled, "ptx", ""),
                                              worker=worker)
        notes.extend(access_notes)
    kernels = join(model, compiled.kernels if compiled is not None else None, cc, evals)
    model = joined_model(model, kernels)  # the compiled figures where the source model had none
    mine = {n: ck for n, ck in compiled.kernels.items() if ck.name not in elsewhere} if compiled is not None else None
    ctx = RuleContext(source=model, cc=cc, compiled=mine, callers=_launchers_callers(str(path), model, build))
    mark("rules")
    findings, problems = run_rules(ctx)
    if assumed_kernels(model):  # no launch found: keep what holds under each plausible block
        findings, held_notes = hold_for_every_block(findings, model, block, lambda other, rules: _findings_under(
            other, rules, path, parsed, defines, launches, compiled, mine, cc, build, worker, ctx.callers))
        notes.extend(held_notes)
    if compiled is not None:
        try:
            findings = list(confirm_source_findings(findings, compiled))
        except Exception as exc:  # noqa: BLE001
            notes.append(f"could not confirm findings against the compiled code ({what_failed(exc)})")
    notes.extend(problems)
    mark("report")
    findings = estimate(findings, model, dict(compiled.kernels) if compiled is not None else None, cc)
    return FileAnalysis(model, compiled, tuple(sort_findings(findings)), tuple(notes), kernels, failure)


def _findings_under(block: Any, rules: frozenset[str], path: str | Path, parsed: Any, defines: dict[str, Any],
                    launches: Any, compiled: Any, mine: Any, cc: str, build: Any, worker: Any,
                    callers: Any) -> list[Any]:
    """The findings of ``rules`` for the file's kernels with no launch, evaluated again under ``block``
    (a ``--block`` mapping naming them): source model, compiled access model on the same PTX, rules.
    Only the kernels ``block`` names are modelled (each kernel's model is its own)."""
    import dataclasses

    from cudalens.project.resolve import resolve_models

    table = launches if launches is not None else resolve_models([parsed])
    named = dataclasses.replace(parsed, kernels=tuple(k for k in parsed.kernels if k.name in block))
    model = analyze_model(named, block=block, defines=defines, budget=Budget(), launches=table)
    model = dataclasses.replace(model, kernels=tuple(assumed_kernels_under(model, block)))
    evals: dict[str, Any] = {}
    if compiled is not None:
        from cudalens.evidence.compiled_access import compiled_access, sass_shared_widths

        flags = tuple(build.nvcc_flags(str(path))) if build is not None else ()
        evals, _notes = compiled_access(str(path), model, cc, compiler_defines(model, defines), flags,
                                        sass_shared_widths(compiled), ptx=getattr(compiled, "ptx", ""), worker=worker)
    model = joined_model(model, join(model, compiled.kernels if compiled is not None else None, cc, evals))
    return run_rules(RuleContext(source=model, cc=cc, compiled=mine, callers=callers), only=rules)[0]


def _launchers_callers(path: str, model: Any, build: Any = None) -> Any:
    """What follows each call of the file's host functions that launch kernels, and the error
    checks the sources see (rule Y1; :mod:`cudalens.source.callers`). ``main`` is not one of them: a
    C++ program never calls it ([basic.start.main]), and where it launches kernels the sources of the
    folder that name ``main`` (all of them, usually) were parsed for no call."""
    from cudalens.source import syntax as syn
    from cudalens.source.callers import CallerFacts, DeferredCallerFacts, caller_facts

    tree = getattr(model, "tree", None)
    names = {fn.name for fn in syn.functions(tree) if fn.space == "host" and fn.name != "main" and syn.launches(fn.node)}
    if not names:
        return CallerFacts()
    dirs = getattr(build, "include_dirs", ()) if build is not None else ()
    return DeferredCallerFacts(lambda: caller_facts(path, tree, names, dirs))  # read when rule Y1 asks


#: what a file's analysis imports on first use (the compiled access model and its worker process, rule
#: Y1's callers, the launch layer the resolution reads, occupancy and speed-up estimates)
_ON_FIRST_USE = ("cudalens.evidence.compiled_access", "cudalens.evidence.model_workers", "cudalens.evidence.fill",
                 "cudalens.evidence.inlined_accesses", "cudalens.evidence.compiled_figures", "cudalens.access.siblings",
                 "cudalens.source.callers", "cudalens.source.host_calls", "cudalens.source.type_facts",
                 "cudalens.project.chains", "cudalens.project.host_code", "cudalens.project.sites",
                 "cudalens.occupancy.calculator", "cudalens.occupancy.whatif", "cudalens.occupancy.sweep",
                 "cudalens.occupancy.blocksize", "cudalens.triage.speedup", "concurrent.futures.process",
                 "multiprocessing.popen_fork", "multiprocessing.synchronize", "numpy.ma")


@functools.cache
def preload() -> None:
    """Import what a file's analysis uses, load the rules, make the parser and read the compute
    capability table, in this process: the per-file workers (pipeline.isolated) forked after it start
    with them, where each imported them again (about 150 modules, numpy's among them)."""
    from cudalens.hardware.table import known_ccs
    from cudalens.rules.registry import load_all
    from cudalens.source.callers import QUERY_KINDS
    from cudalens.source.syntax import _parser, compile_query

    for name in _ON_FIRST_USE:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional part: the worker meets the same error, in its own time
            pass
    load_all()
    _parser()
    compile_query(*QUERY_KINDS)  # rule Y1's callers (each worker compiled it again: ~30 ms)
    known_ccs()  # the compute capability table, read
