"""`cudalens check PATH...`: analyze CUDA files and directories, for CI and pre-commit.

Each PATH is a file (analyzed as given) or a directory (every ``.cu`` and ``.cuh`` file under it,
sorted, hidden directories and files skipped); ``--exclude GLOB`` leaves out matching paths.
Prints a compact summary per file, one line per finding (``--format concise``, or ``github`` for
workflow annotations), the analysis JSON, or a SARIF 2.1.0 log for code-scanning tools.
``--select``/``--ignore``, suppression comments and ``--baseline`` choose what is reported (each
finding left out is counted in the summary); ``--fail-on`` turns findings at or above a priority
into exit code 1.

Files are compiled in parallel (``-j N``, default: every core), with a progress bar when standard
error is a terminal. The build context (``-I``, ``--nvcc-flag``, ``--compile-commands``,
``[tool.cudalens]``) is the one ``analyze`` uses. Headers are compiled through a listed file that
includes them (or alone through a generated wrapper), never handed to nvcc on their own.

Failures, for CI:

* a file that cannot be read or is not CUDA C++ is reported on standard error as one line; the
  other files are analyzed and reported, and the exit code is 2 at the end;
* a file that does not compile is analyzed source-only; its note (and, for the one-line and
  machine formats, a ``PATH: compile-error: FIRST ERROR`` line on standard error) gives the
  compiler's first error; ``--strict`` makes any compile error exit 1 (the same code as
  ``--fail-on``), so a CI job cannot pass on code that no longer builds.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import click

from cudalens.errors import InputError
from cudalens.findings import Priority

CUDA_SUFFIXES = (".cu", ".cuh")


def cuda_files(directory: str) -> list[str]:
    """Every .cu/.cuh file under ``directory``, sorted; hidden directories and files are skipped."""
    root = Path(directory)
    if not root.exists():
        raise InputError(f"{directory}: no such directory")
    if not root.is_dir():
        raise InputError(f"{directory}: not a directory")
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found += [os.path.join(dirpath, f) for f in filenames if f.endswith(CUDA_SUFFIXES) and not f.startswith(".")]
    if not found:
        raise InputError(f"{directory}: no .cu or .cuh files found")
    return sorted(found)


def collect_paths(paths: list[str], exclude: tuple[str, ...] = ()) -> list[str]:
    """The CUDA files named by ``paths`` (files as given, directories searched), minus those
    matching an ``exclude`` glob (on the path as found, or on any of its directory names)."""
    import fnmatch

    def excluded(path: str) -> bool:
        norm = path.replace(os.sep, "/")
        parts = norm.split("/")
        return any(fnmatch.fnmatch(norm, g) or fnmatch.fnmatch(norm, "*/" + g.lstrip("./"))
                   or any(fnmatch.fnmatch(p, g) for p in parts) for g in exclude)

    found: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            try:
                found += [f for f in cuda_files(p) if not excluded(f)]
            except InputError:
                continue  # a directory without CUDA files is fine among others
        elif os.path.isfile(p):
            if not p.endswith(CUDA_SUFFIXES + (".h", ".hpp", ".cuh", ".inl")):
                raise InputError(f"{p}: not a CUDA source (.cu, .cuh, or a header)")
            if not excluded(p):
                found.append(p)
        else:
            raise InputError(f"{p}: no such file or directory")
    found = list(dict.fromkeys(found))
    if not found:
        raise InputError(f"{', '.join(paths)}: no .cu or .cuh files found" + (" (after --exclude)" if exclude else ""))
    return found


def summary_lines(result) -> list[str]:
    """One header per file (finding counts by priority), then one line per finding."""
    from cudalens.pipeline.analysis import COMPILE_ERROR_NOTE

    lines = []
    total: dict[str, int] = {}
    for fa in result.files:
        counts: dict[str, int] = {}
        for f in fa.findings:
            counts[f.priority.value] = counts.get(f.priority.value, 0) + 1
            total[f.priority.value] = total.get(f.priority.value, 0) + 1
        tally = ", ".join(f"{counts[p.value]} {p.value}" for p in Priority if p.value in counts) or "no findings"
        lines.append(f"{fa.model.path}: {tally}")
        if fa.compile_error:
            lines.append(f"  compile-error: {fa.compile_error}")
        for f in fa.findings:
            where = f"{f.line}:{f.column or 1}" if f.line else "-"
            lines.append(f"  {where:>8}  {f.priority.value:<10} {f.rule:<5} {f.message}")
        lines += [f"  note: {n}" for n in fa.notes if not n.startswith(COMPILE_ERROR_NOTE)]
        lines += [f"  kernel {k.name}: {k.launch.describe()}" + _launch_shape(k.launch)
                  for k in fa.model.kernels if k.launch is not None]
    tally = ", ".join(f"{total[p.value]} {p.value}" for p in Priority if p.value in total) or "no findings"
    broken = sum(1 for fa in result.files if fa.compile_error)
    failed = len(getattr(result, "failed", ()))
    extra = (f"; {broken} not compiled (compile-error)" if broken else "") + (f"; {failed} not analyzed" if failed else "")
    lines.append(f"{len(result.files)} file(s): {tally}{extra}")
    return lines


def _launch_shape(launch) -> str:
    """`` (block 16x16x1)`` of a launch with a block, else ``""``."""
    return f" (block {'x'.join(map(str, launch.block))})" if isinstance(launch.block, tuple) else ""


def register(group: click.Group) -> None:
    from cudalens.cli._build import build_options as build_context_options
    from cudalens.cli._triage import fail_on_option, triage_options
    from cudalens.cli.cache import no_cache_option

    @group.command("check")
    @click.argument("paths", nargs=-1, required=True, metavar="PATH...")
    @fail_on_option
    @click.option("--format", "fmt", type=click.Choice(["text", "concise", "github", "json", "sarif"]),
                  default="text", show_default=True,
                  help="Output format (concise: path:line:col: RULE [priority] message; github: workflow "
                       "annotations; sarif: SARIF 2.1.0 for code scanning).")
    @click.option("-o", "--output", default=None, metavar="FILE", help="Write the output to FILE instead of stdout.")
    @click.option("--exclude", "exclude", multiple=True, metavar="GLOB",
                  help="Leave out files whose path (or a directory name in it) matches GLOB (repeatable).")
    @triage_options
    @click.option("--no-compile", is_flag=True, help="Source-only analysis (skip nvcc).")
    @click.option("--cc", default="9.0", show_default=True, help="Target compute capability.")
    @click.option("--define", "-D", "defines", multiple=True, metavar="NAME=VALUE",
                  help="Value of a kernel parameter, template parameter or macro (repeatable).")
    @build_context_options
    @click.option("-j", "--jobs", "jobs", type=click.IntRange(1, 1024), default=None,
                  help="Files compiled at the same time (default: every core).")
    @click.option("--deadline", "deadline", type=click.FloatRange(1, 86400), default=None, metavar="SECONDS",
                  help="Hard limit on each file's analysis (parse, compile, models, rules), in a worker that is "
                       "stopped there; the file is reported in one line and the others finish. [default: 60]")
    @click.option("--memory-cap", "memory_cap", type=click.IntRange(64, 1 << 20), default=None, metavar="MB",
                  help="Memory each file's worker may add before it is stopped. [default: 2048]")
    @click.option("--strict", is_flag=True, help="Exit 1 when a file does not compile (compile-error).")
    @no_cache_option
    @click.option("--instantiate", "instantiate", multiple=True, metavar="'KERNEL<ARGS>'",
                  help="Instantiate a template kernel, e.g. 'gemm<128,128,8>' (repeatable), in each file that "
                       "names it, so the compiled access model evaluates it.")
    def check_cmd(paths, fail_on, fmt, output, exclude, select, ignore, baseline, write_baseline, min_impact,
                  no_compile, cc, defines, include_dirs, nvcc_flags, compile_commands, no_config, trust_flags, deadline,
                  memory_cap, jobs, strict, instantiate, no_cache):
        """Analyze the .cu/.cuh files named or under each PATH; exit 1 with --fail-on when findings reach it."""
        from cudalens.access.model import parse_defines
        from cudalens.cli._triage import build_options, fails
        from cudalens.cli._triage import write_baseline as save_baseline
        from cudalens.pipeline import analyze
        from cudalens.triage import triage_analysis

        try:
            defs = parse_defines(list(defines))
        except ValueError as exc:
            raise InputError(str(exc)) from None
        from cudalens.cli._build import make_build, make_project
        from cudalens.cli.analyze import check_instantiations
        from cudalens.cli.cache import result_cache

        insts = check_instantiations(tuple(instantiate))

        from cudalens.cli._triage import refuse_clobber_all
        from cudalens.textio import printable

        files = collect_paths(list(paths), tuple(exclude))
        refuse_clobber_all(files, output, write_baseline)
        options = build_options(files, tuple(select), tuple(ignore), baseline, min_impact)
        project = make_project(list(paths), files)
        build = make_build(files, include_dirs, nvcc_flags, compile_commands, no_config, trust_flags, project)
        with _progress(len(files)) as progress:
            raw = analyze(files, defines=defs, cc=cc, compile=not no_compile, build=build,
                          jobs=jobs or os.cpu_count() or 1, keep_going=True, progress=progress, instantiate=insts,
                          file_limits=_limits(deadline, memory_cap), project=project,
                          cache=result_cache(no_cache))
        if write_baseline:
            selected, _ = triage_analysis(raw, dataclasses.replace(options, baseline=None, min_impact=None))
            save_baseline(write_baseline, selected.findings, {fa.model.path: fa.model.text for fa in raw.files})
        result, triaged = triage_analysis(raw, options)
        text = render(result, triaged, fmt)
        if output:
            from cudalens.textio import write_atomic

            try:
                write_atomic(output, text + "\n")
            except OSError as exc:
                raise InputError(f"{output}: cannot write ({exc.strerror})") from None
        elif text:
            click.echo(text)
        if fmt in ("concise", "github") and triaged.suppressed_total:
            click.echo(f"cudalens: {triaged.summary()}", err=True)
        broken = [(fa.model.path, fa.compile_error) for fa in result.files if fa.compile_error]
        if fmt != "text":
            for path, error in broken:
                click.echo(printable(f"{path}: compile-error: {error}"), err=True)
        for _path, reason in result.failed:
            click.echo(printable(f"cudalens: {reason}"), err=True)
        if result.failed:
            return 2
        return 1 if fails(result.findings, fail_on) or (strict and broken) else 0


def _limits(deadline: float | None, memory_cap: int | None):
    from cudalens.pipeline.isolated import FileLimits

    d = FileLimits()
    return FileLimits(seconds=deadline or d.seconds, memory_mb=memory_cap or d.memory_mb)


class _progress:
    """A progress bar on standard error when it is a terminal; nothing otherwise."""

    def __init__(self, total: int) -> None:
        import sys

        self.total = total
        self.bar = None
        if sys.stderr.isatty() and total > 1:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)

    def __enter__(self):
        if self.bar is None:
            return None
        self.bar.start()
        task = self.bar.add_task("analyzing", total=self.total)

        def advance(done: int, total: int, path: str) -> None:
            self.bar.update(task, completed=done, description=os.path.basename(path))

        return advance

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def render(result, triaged, fmt: str) -> str:
    """The check report in ``fmt``; findings left out by triage are counted, never listed."""
    if fmt == "json":
        data = result.to_dict()
        data["suppressed"] = dict(triaged.suppressed)
        return json.dumps(data, indent=2, default=str)
    if fmt == "sarif":
        from cudalens.report.sarif import to_sarif
        from cudalens.rules.registry import load_all

        log = to_sarif(result.findings, load_all())
        log["runs"][0].setdefault("properties", {})["suppressed"] = dict(triaged.suppressed)
        return json.dumps(log, indent=2)
    if fmt in ("concise", "github"):
        from cudalens.report.concise import concise_lines, github_lines

        return "\n".join((concise_lines if fmt == "concise" else github_lines)(result.findings))
    lines = summary_lines(result)
    if triaged.suppressed_total:
        lines[-1] += f"; {triaged.summary()}"
    return "\n".join(lines)
