"""Analysing many files: compiles in parallel, headers through the units that include them, and
one bad file reported without stopping the others.

Order of work (the result lists files in the order given):

1. every file is parsed once on the calling thread (tree-sitter parsers are not shared between
   threads), which gives the macros its compile needs (:func:`cudalens.pipeline.defines.compiler_defines`);
2. translation units are compiled ``jobs`` at a time in worker threads (nvcc runs in its own
   processes, so the threads only wait);
3. a header (``.cuh``, ``.h``, ...) is compiled through the first of the given translation units
   whose dependency list (the device preprocessor's ``-MD``) holds it, else through a unit of
   compile_commands.json that includes it, so its templates are instantiated as the project uses them
   and its findings point into its own lines; a header no unit includes is compiled through the
   generated wrapper alone (never handed to nvcc as an input file);
4. each file's model and rules run on the calling thread as its compile completes.

With per-file limits (``check``: :func:`_analyze_isolated`), the translation units are compiled first,
in one background process (:mod:`cudalens.pipeline.compile_ahead`: ``jobs`` compiles at a time, the SASS
of many units from one nvdisasm start), and then analysed, each under its own limits in one of ``jobs`` workers
(:mod:`cudalens.pipeline.worker_pool`: a worker takes one file after another)
(no second process for the compiled access model then: ``jobs`` processes work at once).

A file that cannot be read or is not CUDA C++ raises :class:`~cudalens.errors.InputError`, or with
``keep_going`` is listed as ``(path, reason)`` and skipped. A file that does not compile is not a
failure: it is analyzed source-only, with the compiler's first error in its notes.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cudalens.errors import CudalensError, InputError, what_failed
from cudalens.pipeline.kernel_names import kernel_names
from cudalens.project.context import is_header
from cudalens.project.tree import source_text

Progress = Callable[[int, int, str], None]


def _reason(path: str, exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return f"{path}: cannot read ({exc.strerror or type(exc).__name__})"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if Path(path).name in text else f"{path}: {text}"


def analyze_files(paths: list[str], *, block: Any, defines: Mapping[str, Any], cc: str,
                  compile: bool, build: Any, jobs: int = 1, keep_going: bool = False,
                  progress: Progress | None = None, instantiate: tuple[str, ...] = (),
                  file_limits: Any = None, project: Any = None,
                  cache: Any = None) -> tuple[list[Any], list[tuple[str, str]], tuple[str, ...]]:
    """(FileAnalysis per analysable file, [(path, reason)] of the others, one line for each limit the
    analysis as a whole met: the project's launch resolution stopped, see :func:`_bounded_launch_table`).
    ``instantiate``: template kernels each compiled unit instantiates; one the compiler rejects is an
    InputError naming it.
    ``file_limits``: a :class:`cudalens.pipeline.isolated.FileLimits`: each file's whole analysis in a
    worker process stopped at its deadline or memory cap (see :func:`_analyze_isolated`); the
    project's launch resolution runs in one under the same limits.
    ``project``: the :class:`cudalens.project.tree.Project` the files belong to: its launches
    (every file of it) give each kernel its launch, and a ``.cu`` another of its units includes is
    compiled through that unit. Without it, the project of the first file is used for the launches.
    ``cache``: a :class:`cudalens.pipeline.result_cache.ResultCache`: a file whose stored analysis is
    still valid is read from it, not analysed (nor compiled); the others are stored in it."""
    from cudalens.hardware.table import limits
    from cudalens.source.parse import source_problem

    refused = {p: problem for p in dict.fromkeys(paths) if (problem := source_problem(p))}
    if refused and not keep_going:
        raise InputError(next(iter(refused.values())))
    readable = [p for p in dict.fromkeys(paths) if p not in refused]
    wanted = _instantiations(readable, instantiate) if compile else {}
    cc = limits(cc).cc  # normalised once here (an unknown one: an InputError naming the known ones)
    bare: dict[str, str] = {}  # each file's key with no launches (ResultCache.seen)
    if cache is not None:
        from cudalens.pipeline.result_cache import file_keys

        bare = file_keys(readable, block=block, defines=defines, cc=cc, compile=compile, build=build,
                         project=project, table=None, instantiate=wanted)
    early = None  # with -j N > 1, what no stored analysis answers compiles while the launch table is resolved
    if file_limits is not None and compile and jobs > 1:
        early = _compile_unseen(readable, cache, bare, project, build, cc, defines, wanted, jobs, file_limits)
    try:
        if file_limits is not None:
            table = _bounded_launch_table(readable, project, build, cache, file_limits)
        else:
            table = _launch_table(readable, project, build, cache)
        if table.partial:  # analysed with their own launches: neither read from nor stored in the cache
            cache = None
        cached, keys = _consult(cache, readable, block, defines, cc, compile, build, project, table, wanted)
        filler = None
        if cache is not None:
            from cudalens.pipeline.result_fill import Filler

            filler = Filler(cache, keys, cached, project, build, bare)
        if file_limits is not None:  # each analysis stored as it arrives (filler.one), rendered in its worker
            done_, failed_ = _analyze_isolated(readable, block=block, defines=defines, cc=cc, compile=compile,
                                               build=build, jobs=jobs, keep_going=keep_going, progress=progress,
                                               wanted=wanted, limits=file_limits, project=project,
                                               table=table, cached=cached, early=early,
                                               store=filler.one if filler is not None else None)
        else:
            done_, failed_ = _analyze_in_process(readable, block=block, defines=defines, cc=cc, compile=compile,
                                                 build=build, jobs=jobs, keep_going=keep_going, progress=progress,
                                                 wanted=wanted, project=project, table=table,
                                                 cached=cached)
    finally:
        if early is not None:
            early.close()
    if filler is not None:
        done_ = filler.all(done_)
    reasons = {**refused, **dict(failed_)}
    return done_, [(p, reasons[p]) for p in dict.fromkeys(paths) if p in reasons], \
        ((table.partial,) if table.partial else ())


def _analyze_in_process(paths: list[str], *, block: tuple[int, int, int] | None, defines: Mapping[str, Any],
                        cc: str, compile: bool, build: Any, jobs: int, keep_going: bool, progress: Progress | None,
                        wanted: Mapping[str, tuple[str, ...]], project: Any = None, table: Any = None,
                        cached: Mapping[str, Any] | None = None) -> tuple[list[Any], list[tuple[str, str]]]:
    """analyze_files in this process (compiles in threads), without the per-file worker. ``cc``
    normalised and ``wanted`` (:func:`_instantiations`) worked out by analyze_files."""
    from cudalens.pipeline.defines import compiler_defines
    from cudalens.pipeline.stages import analyze_file
    from cudalens.source.parse import parse_file

    order = list(dict.fromkeys(paths))
    failed: dict[str, str] = {}

    def fail(path: str, exc: BaseException) -> None:
        if not keep_going:
            if isinstance(exc, OSError):
                raise InputError(_reason(path, exc)) from None
            raise exc
        failed[path] = _reason(path, exc)

    cached = cached or {}
    included = {p: project.includers(p) if project is not None and not is_header(p) else () for p in order}
    defined = {p: kernel_names(source_text(p)) for p in order}
    futures: dict[str, Future] = {}
    from cudalens.evidence.model_workers import model_worker

    worker = model_worker() if compile and set(order) - set(cached) else None  # forked before the compile threads exist
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="cudalens-compile") if compile else None
    try:
        if pool is not None:
            compile_defs: dict[str, dict[str, Any]] = {}
            for p in (q for q in order if q not in cached):
                try:
                    predefined = tuple(build.header_macros(p).items()) if build is not None else ()
                    compile_defs[p] = compiler_defines(parse_file(p, predefined), defines)
                except (CudalensError, OSError) as exc:
                    fail(p, exc)
            units = [p for p in order if (p in compile_defs or p in cached) and not is_header(p) and not included[p]]
            for p in units:
                futures[p] = _done((cached[p].compiled, [])) if p in cached else pool.submit(_compile_unit, str(p), cc, compile_defs[p], build, wanted.get(p, ()))
            for p in order:
                if p in compile_defs and (is_header(p) or included[p]):
                    futures[p] = pool.submit(_compile_header, p, units, futures, cc, compile_defs[p], build,
                                             wanted.get(p, ()), included[p])
        done: list[Any] = []
        for i, p in enumerate(order):
            if p in cached:
                done.append(cached[p])
            elif p not in failed:
                try:
                    outcome = futures[p].result() if p in futures else None
                    elsewhere = frozenset().union(*(defined[q] for q in order if q != p)) - defined[p]
                    done.append(analyze_file(p, block=block, defines=defines, cc=cc, compile=compile, build=build,
                                             compiled_outcome=outcome, instantiate=wanted.get(p, ()),
                                             worker=worker, launches=table, elsewhere=elsewhere))
                except (CudalensError, OSError) as exc:
                    fail(p, exc)
            if progress is not None:
                progress(i + 1, len(order), p)
        return done, [(p, failed[p]) for p in order if p in failed]
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if worker is not None:
            worker.shutdown(wait=True, cancel_futures=True)


def _analyze_isolated(order: list[str], *, block: tuple[int, int, int] | None, defines: Mapping[str, Any], cc: str,
                      compile: bool, build: Any, jobs: int, keep_going: bool, progress: Progress | None,
                      wanted: Mapping[str, tuple[str, ...]], limits: Any,
                      project: Any = None, table: Any = None, cached: Mapping[str, Any] | None = None,
                      store: Callable[[str, Any], None] | None = None, early: Any = None) -> tuple[list[Any], list[tuple[str, str]]]:
    """analyze_files with every file under its own limits in a worker (pipeline.worker_pool): the units first, ``jobs``
    at a time, each parsing, compiling and analysing its file; then the headers, compiled through
    the units' results. A file stopped at a limit is listed with its one line (or, without
    ``keep_going``, raised as an InputError). ``store(path, result)``: called here as each result
    arrives (the result cache's); each worker then renders its file's kernel records for the JSON
    view, so that neither is left for the end. ``early``: the units' compiles started before the
    launch table (:func:`_compile_unseen`); the other units that missed are compiled after it."""
    from cudalens.pipeline.isolated import Stopped, mark
    from cudalens.pipeline.worker_pool import run_reused

    cached = cached or {}
    missed = [p for p in order if p not in cached]  # an all-hit run reads nothing more
    included = {p: project.includers(p) if project is not None and not is_header(p) and missed else () for p in order}
    defined = {p: kernel_names(source_text(p)) for p in order} if missed else {}
    unit_results: dict[str, Any] = {}
    ahead: Any = None  # the units' compiles, ahead of their analyses (pipeline.compile_ahead)

    def one(p: str) -> Any:
        from cudalens.evidence.model_workers import model_worker
        from cudalens.pipeline.analysis import kernels_json
        from cudalens.pipeline.defines import compiler_defines
        from cudalens.pipeline.stages import analyze_file
        from cudalens.source.parse import parse_file

        # a second process for the compiled access model only where no other file's analysis could use
        # the core: with the units compiled ahead, -j N means N processes (forked while one thread runs)
        worker = model_worker() if compile and ahead is None else None
        outcome: Future | None = None
        compiling = None
        try:
            if compile and ahead is not None and (got := ahead.outcome(p)) is not None:
                outcome = _done(got[1]) if got[0] == "value" else _failed(got[1])
            elif compile:
                defs: dict[str, Any] = {}
                if defines:  # which --define values nvcc may get depends on the file's syntax (none: none)
                    mark("parse")
                    predefined = tuple(build.header_macros(p).items()) if build is not None else ()
                    defs = compiler_defines(parse_file(p, predefined), defines)
                # the compile in a thread, while the file's front end and source model run here
                compiling = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cudalens-compile")
                if is_header(p) or included[p]:
                    units = [u for u in unit_results if not isinstance(unit_results[u], BaseException)]
                    futures = {u: _done((unit_results[u].compiled, [])) for u in units}
                    outcome = compiling.submit(_compile_header, p, units, futures, cc, defs, build,
                                               wanted.get(p, ()), included[p])
                else:
                    outcome = compiling.submit(_compile_unit, p, cc, defs, build, wanted.get(p, ()))
            elsewhere = frozenset().union(*(defined[q] for q in order if q != p)) - defined[p]
            fa = analyze_file(p, block=block, defines=defines, cc=cc, compile=compile, build=build,
                              compiled_outcome=outcome, instantiate=wanted.get(p, ()), worker=worker,
                              launches=table, elsewhere=elsewhere)
            return fa if store is None else dataclasses.replace(fa, kernels_json=kernels_json(fa))
        finally:
            if compiling is not None:
                compiling.shutdown(wait=True, cancel_futures=True)
            if worker is not None:
                worker.shutdown(wait=True, cancel_futures=True)

    count = [0]

    def tick(p: str, res: Any) -> None:
        if store is not None:
            store(p, res)
        count[0] += 1
        if progress is not None:
            progress(count[0], len(order), p)

    units = [p for p in order if not is_header(p) and not included[p]]
    if missed:  # imported once here, not in every worker
        from cudalens.pipeline.stages import preload

        preload()
    unit_results.update({p: cached[p] for p in units if p in cached})
    todo = [p for p in units if p not in cached]
    _read_headers(build, todo)
    if early is not None and not any(early.covers(p) for p in todo):
        early.close()  # every unit it compiles was answered by the cache after all
        early = None
    if compile:
        from cudalens.pipeline.compile_ahead import Compiles, start_compiles

        rest = [p for p in todo if early is None or not early.covers(p)]
        late = start_compiles(rest, cc, defines, build, wanted, jobs, limits)
        ahead = Compiles(early, late) if early is not None or late is not None else None
    try:
        if ahead is not None:  # the analyses start once every unit has compiled, the largest first
            if progress is not None:
                progress(count[0], len(order), f"compiling {len(todo)} units")
            ahead.wait()
        start = sorted(todo, key=lambda p: -ahead.size(p)) if ahead is not None and jobs > 1 else todo
        got = run_reused(start, one, limits, jobs, tick)
        unit_results.update({p: got[p] for p in todo})  # in the given order: a header compiles through the first
    finally:
        if ahead is not None:
            ahead.close()
        ahead = None
    results = {**unit_results, **cached}
    results.update(run_reused([p for p in order if p not in results], one, limits, jobs, tick))
    done: list[Any] = []
    failed: dict[str, str] = {}
    for p in order:
        res = results[p]
        if isinstance(res, (CudalensError, OSError, Stopped)):
            if not keep_going:
                raise InputError(_reason(p, res)) from None
            failed[p] = _reason(p, res)
        elif isinstance(res, BaseException):
            if not keep_going:
                raise res
            failed[p] = f"{p}: the analysis failed ({what_failed(res)}; please report it with this file)"
        else:
            done.append(res)
    return done, [(p, failed[p]) for p in order if p in failed]


def _compile_unit(path: str, cc: str, defines: Mapping[str, Any], build: Any,
                  instantiate: tuple[str, ...] = ()) -> tuple[Any | None, list[str]]:
    """The one compile of a unit: its cubin facts and, kept from the same nvcc run, the PTX the
    compiled access model reads (CompileResult.ptx)."""
    from cudalens.pipeline.compile_step import compile_one as _compile

    return _compile(path, cc, defines, build, instantiate=instantiate)


def _compile_header(header: str, units: list[str], futures: dict[str, Future], cc: str, defines: Mapping[str, Any],
                    build: Any, instantiate: tuple[str, ...] = (),
                    includers: tuple[str, ...] = ()) -> tuple[Any | None, list[str]]:
    """Compile ``header`` (or a ``.cu`` another unit includes) through the first unit that
    includes it (units are queued before headers, so waiting on them cannot deadlock the pool);
    ``includers``: the project's units that include it, tried when no given unit does."""
    from cudalens.pipeline.compile_step import compile_one as _compile

    real = str(Path(header).resolve())
    for unit in units:
        result, _notes = futures[unit].result()
        if real in getattr(result, "deps", ()):  # a unit that compiled (a CompileFailure has no deps)
            compiled, notes = _compile(header, cc, defines, build, through=unit, instantiate=instantiate)
            return compiled, [f"compiled through {unit}, which includes it", *notes]
    for unit in includers[:3]:
        compiled, notes = _compile(header, cc, defines, build, through=unit, instantiate=instantiate)
        if compiled is not None:
            return compiled, [f"compiled through {unit}, which includes it", *notes]
    # not among the given files: a unit of compile_commands.json that includes it (its include
    # graph read from the sources with its own include folders)
    kernels = kernel_names(source_text(real))
    candidates = [u for u in (build.commands if build is not None else {}) if real in build.project_includes(u)]
    # first the units that name one of the header's kernels (they instantiate its templates)
    candidates.sort(key=lambda u: not any(k in source_text(u) for k in kernels))
    for unit in candidates[:3]:
        compiled, notes = _compile(header, cc, defines, build, through=unit, instantiate=instantiate)
        if hasattr(compiled, "deps"):
            return compiled, [f"compiled through {unit} (compile_commands.json), which includes it", *notes]
    return _compile(header, cc, defines, build, instantiate=instantiate)


def _done(value: Any) -> Future:
    f: Future = Future()
    f.set_result(value)
    return f


def _failed(exc: BaseException) -> Future:
    f: Future = Future()
    f.set_exception(exc)
    return f


def _compile_unseen(paths: list[str], cache: Any, bare: Mapping[str, str], project: Any, build: Any, cc: str,
                    defines: Mapping[str, Any], wanted: Mapping[str, tuple[str, ...]], jobs: int, limits: Any) -> Any:
    """The units no stored analysis can answer, whatever launches the table gives them (none was ever
    stored under their key with no launches: :meth:`ResultCache.seen`; every unit without a cache),
    compiled in the background from now on (:func:`cudalens.pipeline.compile_ahead.start_compiles`);
    None for fewer than two."""
    from cudalens.pipeline.compile_ahead import start_compiles
    from cudalens.pipeline.stages import preload

    units = [p for p in paths if not is_header(p) and not (project is not None and project.includers(p))]
    if cache is not None:
        units = [p for p in units if p in bare and not cache.seen(bare[p])]
    if len(units) < 2:
        return None
    preload()  # imported once here, for the compile process and every worker after it
    _read_headers(build, units)
    return start_compiles(units, cc, defines, build, wanted, jobs, limits)


def _consult(cache: Any, paths: list[str], block: Any, defines: Mapping[str, Any], cc: str, compile: bool,
             build: Any, project: Any, table: Any, wanted: Mapping[str, tuple[str, ...]]
             ) -> tuple[dict[str, Any], dict[str, str]]:
    """(the cache's still valid analyses of ``paths``, each path's key) (pipeline.result_cache);
    ``wanted``: the templates each file instantiates (:func:`_instantiations`)."""
    if cache is None:
        return {}, {}
    from cudalens.pipeline.result_cache import consult

    return consult(cache, paths, block=block, defines=defines, cc=cc, compile=compile, build=build,
                   project=project, table=table, instantiate=wanted, kernels=lambda p: kernel_names(source_text(p)))


def _launch_table(paths: list[str], project: Any, build: Any, cache: Any = None) -> Any:
    """The launch table of the project (or of ``paths`` alone), built once for every file (read from
    ``cache`` when no file it reads changed)."""
    from cudalens.project.resolve import resolve_project
    from cudalens.project.tree import Project, load_project

    if project is None:  # the project of the first file, as `cudalens analyze FILE` finds it
        project = load_project(paths[0]) if paths else Project(".", ())
    if cache is not None:
        from cudalens.pipeline.result_cache import launch_table

        return launch_table(cache, paths, project, build, lambda: resolve_project(project, build, extra=paths))
    return resolve_project(project, build, extra=paths)


#: what the launch table's worker is called in the line that says it stopped
RESOLUTION = "the project's launch resolution"


def _bounded_launch_table(paths: list[str], project: Any, build: Any, cache: Any, limits: Any) -> Any:
    """:func:`_launch_table` in a worker under ``limits`` (pipeline.isolated: killed at the deadline or
    the memory cap, as each file's analysis is). Stopped or failed, the table is empty and says why
    (``LaunchTable.partial``): each file is then analysed with the launches in its own file only, and
    every launch it reports carries that line in its notes."""
    from types import MappingProxyType

    from cudalens.pipeline.isolated import Stopped, mark, run_one
    from cudalens.project.resolve import LaunchTable

    if cache is not None and project is not None:  # stored: a hash and a read here, no worker
        from cudalens.pipeline.result_cache import stored_launch_table

        stored = stored_launch_table(cache, paths, project, build)
        if stored is not None:
            return stored

    def resolve() -> tuple[dict[Any, Any], str | None]:
        mark("resolve")
        table = _launch_table(paths, project, build, cache)
        return dict(table.sites), table.root  # (a MappingProxyType does not pickle)

    from cudalens.pipeline.stages import preload

    preload()  # the files are analysed next: imported once here, for this worker and theirs
    _read_headers(build, paths)
    try:
        sites, root = run_one(resolve, RESOLUTION, limits)
    except Exception as exc:  # noqa: BLE001 - whatever stopped it, the files are analysed, and the report says why
        why = str(exc) if isinstance(exc, Stopped) else f"{RESOLUTION} failed ({what_failed(exc)})"
        return LaunchTable(root=getattr(project, "root", None),
                           partial=f"{why}; each file is analysed with the launches in its own file only")
    return LaunchTable(MappingProxyType(sites), root)


def _read_headers(build: Any, paths: list[str]) -> None:
    """The project headers of ``paths`` read here, once, before the workers are forked: the launch
    table's, the compiles' and each file's worker find them read (the build context keeps each
    header's macros and each include's place), where each read them all again. A file that cannot be
    walked is left to its worker, which reports it."""
    if build is None:
        return
    for p in paths:
        try:
            build.header_macros(p)
        except Exception:  # noqa: BLE001 - its worker meets the same error and reports it for that file
            continue


def _instantiations(paths: list[str], instantiate: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Per file, the ``--instantiate`` templates whose name its text mentions (a unit that never
    names a template cannot instantiate it); InputError for one that no given file mentions."""
    out: dict[str, tuple[str, ...]] = {}
    for spec in instantiate:
        name = spec.split("<", 1)[0].strip().rsplit("::", 1)[-1].strip()
        word = re.compile(rf"\b{re.escape(name)}\b")
        hits = [p for p in paths if word.search(source_text(p))]
        if not hits:
            raise InputError(f"--instantiate {spec!r}: no analyzed file mentions {name!r}")
        for p in hits:
            out[p] = (*out.get(p, ()), spec)
    return out
