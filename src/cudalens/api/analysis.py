"""``analyze`` and ``check``: the static analysis (and, for ``analyze``, a measured launch and
Nsight Compute counters) as one typed :class:`Report`, the class ``profile`` returns too and every
output format is emitted from (:mod:`cudalens.report.emit`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Union

from cudalens.errors import InputError
from cudalens.pipeline import report

PathLike = Union[str, "os.PathLike[str]"]


class Report(report.Report):
    """What :func:`analyze`, :func:`check` or :func:`profile` established
    (:class:`cudalens.pipeline.report.Report`: the records, the findings left out per reason, the
    measured evidence, the application profile, ``to_dict()``), shown as one HTML page in a notebook."""

    def _repr_html_(self) -> str:
        from cudalens.report.emit import emit

        return emit(self, "html")


def _paths(paths: PathLike | Iterable[PathLike]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    out = [os.fspath(p) for p in paths]
    if not out:
        raise InputError("no file given")
    return out


def _defines(defines: Mapping[str, Any] | Sequence[str] | None) -> dict[str, Any]:
    if not defines:  # none given: the access model (and numpy) not imported for nothing
        return {}
    from cudalens.access.model import parse_defines

    items = [f"{k}={v}" for k, v in defines.items()] if isinstance(defines, Mapping) else list(defines)
    try:
        return dict(parse_defines(items))
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _block(block: str | Sequence[Any] | None) -> Any:
    """``--block`` values: one block (``"32,8"``, ``(32, 8)``) for every kernel, or per-kernel specs
    (``["transpose=32,8", "64"]``), as :func:`cudalens.access.model.parse_blocks` reads them."""
    if block is None or (not isinstance(block, str) and len(block) == 0):
        return None
    from cudalens.access.model import parse_blocks

    if isinstance(block, str):
        specs: tuple[str, ...] = (block,)
    elif all(isinstance(b, int) for b in block):
        specs = (",".join(str(int(b)) for b in block),)
    else:
        specs = tuple(str(b) for b in block)
    try:
        return parse_blocks(specs)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def load_project_of(paths: Sequence[str], files: Sequence[str]) -> Any:
    """The project the analysed ``paths`` belong to: a folder named alone is its own root; else the
    root found from the first file (:func:`cudalens.project.tree.find_root`)."""
    from cudalens.project.tree import load_project

    if len(paths) == 1 and os.path.isdir(paths[0]):
        return load_project(paths[0], named=True)
    return load_project(files[0]) if files else None


def analyze(paths: PathLike | Iterable[PathLike], *, cc: str | None = None,
            defines: Mapping[str, Any] | Sequence[str] | None = None, block: str | Sequence[int] | None = None,
            compile: bool = True, include_dirs: Sequence[str] = (), nvcc_flags: Sequence[str] = (),
            compile_commands: str | None = None, use_config: bool = True, trust_flags: bool = False,
            select: Sequence[str] = (), ignore: Sequence[str] = (), baseline: str | None = None,
            min_priority: str | None = None, min_impact: float | None = None,
            write_baseline: str | None = None, instantiate: Sequence[str] = (), binary: str | None = None,
            run: Any = None, counters: str | None = None, jobs: int = 1, keep_going: bool = False,
            progress: Callable[[int, int, str], None] | None = None, file_limits: Any = None,
            project: Any = None, cache: Any = None) -> Report:
    """Analyze CUDA files: warp access model, divergence, pattern rules, compiled facts.

    ``cc``: the target (default: ``[tool.cudalens] cc``, else the GPU's, else 9.0). ``defines``:
    ``{"N": 4096}`` or ``["N=4096"]`` (``"kernel:N=4096"`` for one kernel). ``block``: one block for
    every kernel without a launch, or per-kernel specs (``["transpose=32,8"]``); launches found in
    the project win otherwise. ``select``/``ignore``/``baseline``/``min_priority``/``min_impact``
    choose what is reported, as on the command line (the configuration gives the defaults unless
    ``use_config=False``). ``trust_flags``: let flags from the repository's configuration name
    programs (``-ccbin``...). ``file_limits``: a :class:`cudalens.pipeline.isolated.FileLimits`
    (each file in a worker stopped at its deadline or memory cap). ``project``: the project the
    files belong to (default: found from the files). ``cache``: a
    :class:`cudalens.pipeline.result_cache.ResultCache` (files unchanged since read from it; default
    none). ``run``: a :class:`cudalens.RunSpec` to measure on the GPU (skipped with
    a note when there is none); ``counters``: an ncu CSV file, or ``"run"`` to profile ``run``.
    """
    from cudalens.hardware.target import resolve_target
    from cudalens.pipeline import PROFILE_RUN, gather_evidence
    from cudalens.pipeline import analyze as run_pipeline
    from cudalens.project import build_context
    from cudalens.project.config import Config, load_config
    from cudalens.triage import triage_analysis
    from cudalens.triage.options import build_options
    from cudalens.triage.options import write_baseline as save_baseline

    files = _paths(paths)
    if counters == PROFILE_RUN and run is None:
        raise InputError("counters='run' profiles the measured launch: give run=, or a counters CSV file")
    defs, blk = _defines(defines), _block(block)
    insts = check_instantiations(tuple(instantiate))
    config = load_config(files) if use_config else Config()  # read once: triage, target and build take it
    options = build_options(config, tuple(select), tuple(ignore), baseline, min_impact, min_priority)
    if write_baseline:
        from cudalens.textio import refuse_clobber

        try:
            refuse_clobber(write_baseline, files, "--write-baseline")
        except ValueError as exc:
            raise InputError(str(exc)) from None
    target = resolve_target(cc, config.cc())
    if project is None:
        project = load_project_of(files, files)
    if project is not None:  # kernels in an included .cu (or header) are evaluated with the unit
        given = {os.path.realpath(f) for f in files}
        files = list(dict.fromkeys([*files, *(f for u in files for f in project.included_kernel_files(u)
                                              if f not in given)]))
    build = build_context(files, include_dirs=list(include_dirs), nvcc_flags=list(nvcc_flags),
                          compile_commands=compile_commands, use_config=use_config, trust_flags=trust_flags,
                          project=project, config=config)
    raw = run_pipeline(files, block=blk, defines=defs, cc=target.cc, compile=compile, build=build, binary=binary,
                       instantiate=insts, jobs=jobs, keep_going=keep_going, progress=progress,
                       file_limits=file_limits, project=project, cache=cache)
    if write_baseline:
        chosen, _ = triage_analysis(raw, dataclasses.replace(options, baseline=None, min_impact=None,
                                                             min_priority=None))
        save_baseline(write_baseline, chosen.findings, {fa.model.path: fa.model.text for fa in raw.files})
    result, triaged = triage_analysis(raw, options)
    warnings = config_warnings(config) + suppression_warnings(raw)
    evidence = None
    if run is not None or counters:
        if run is not None:  # the measured launch is built as the analysis was
            from cudalens.pipeline.measured import _file_of

            origin = _file_of(result, run.kernel).model.path
            run = dataclasses.replace(run, options=build.nvcc_flags(origin))
        evidence = gather_evidence(result, run=run, counters=counters)
    return report.with_sources(Report("analyze", result, dict(triaged.suppressed), evidence, target.origin,
                                      tuple(warnings)))


#: keys of [tool.cudalens] read outside the build context and the triage options
REPORT_KEYS: tuple[str, ...] = ()


def config_warnings(config: Any) -> list[str]:
    """One warning per key of the configuration that nothing reads (a typo is otherwise silent)."""
    from cudalens.project.config import BUILD_KEYS
    from cudalens.triage.options import CONFIG_KEYS

    known = set(BUILD_KEYS) | set(CONFIG_KEYS) | set(REPORT_KEYS)
    unknown = [k for k in config.section if str(k).replace("_", "-") not in known]
    return [f"{config.path}: [tool.cudalens] unknown key {k!r} (known: {', '.join(sorted(known))})" for k in unknown]


def suppression_warnings(raw: Any) -> list[str]:
    """Unknown rule names and unused ``cudalens: ignore`` comments in the analyzed files, judged
    against every finding of the analysis before suppression (a header's comment may suppress a
    finding reported through the file that includes it)."""
    from cudalens.rules.registry import load_all
    from cudalens.triage.suppress import audit

    commented = [fa for fa in raw.files if "cudalens" in fa.model.text.lower()]  # a directive names the tool
    if not commented:
        return []  # (no rule module imported for nothing)
    known = set(load_all())
    by_file: dict[str, list[tuple[str, int | None]]] = {}
    for fa in raw.files:
        for f in fa.findings:
            by_file.setdefault(f.file, []).append((f.rule, f.line))
    out: list[str] = []
    for fa in commented:
        out += audit(fa.model.path, fa.model.text, by_file.get(fa.model.path, ()), known)
    return out


def check(paths: PathLike | Iterable[PathLike], *, exclude: Sequence[str] = (), jobs: int | None = None,
          **options: Any) -> Report:
    """Analyze the ``.cu``/``.cuh`` files named by ``paths`` or found under them (hidden folders
    skipped, ``exclude`` globs left out), going on past files that cannot be analyzed (listed in
    :attr:`Report.failed`). ``options``: those of :func:`analyze` (no ``run``/``counters``)."""
    from cudalens.project.paths import collect_paths

    for key in ("run", "counters", "binary", "keep_going"):
        if key in options:
            raise InputError(f"check() takes no {key}= (analyze() does)")
    given = _paths(paths)
    files = collect_paths(given, tuple(exclude))
    if "project" not in options:
        options["project"] = load_project_of(given, files)
    done = analyze(files, jobs=jobs or os.cpu_count() or 1, keep_going=True, **options)
    return dataclasses.replace(done, command="check")


def check_instantiations(specs: Sequence[str]) -> tuple[str, ...]:
    """Template kernels to instantiate (``'gemm<128,128,8>'``), each checked (InputError naming a
    bad one) before any work."""
    from cudalens.compiled.invocation import instantiation_line

    for i, spec in enumerate(specs):
        instantiation_line(spec, i)
    return tuple(specs)
