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
* a file that does not compile is analyzed source-only and every format says so with the fix
  (pipeline.compile_failure): a note (text, json), one diagnostic at the compiler's first error
  (concise, github, sarif), a ``PATH: compile-error: ...`` line on standard error (json, sarif),
  and the count of files analysed source-only in the summary; ``--strict`` makes any of them
  exit 1 (the same code as ``--fail-on``), so a CI job cannot pass on code that no longer builds.
"""

from __future__ import annotations

import os

import click

from cudalens.cli._common import cc_option, show_source_option
from cudalens.errors import InputError


def register(group: click.Group) -> None:
    from cudalens.cli._build import build_options as build_context_options
    from cudalens.cli._triage import fail_on_option, triage_options
    from cudalens.cli.cache import no_cache_option

    @group.command("check")
    @click.argument("paths", nargs=-1, required=True, metavar="PATH...")
    @fail_on_option
    @click.option("--format", "fmt", type=click.Choice(["text", "concise", "github", "json", "sarif", "html"]),
                  default="text", show_default=True,
                  help="Output format (concise: path:line:col: RULE [priority] message; github: workflow "
                       "annotations; sarif: SARIF 2.1.0 for code scanning; html: one page, as analyze writes it).")
    @click.option("-o", "--output", default=None, metavar="FILE", help="Write the output to FILE instead of stdout.")
    @show_source_option
    @click.option("--exclude", "exclude", multiple=True, metavar="GLOB",
                  help="Leave out files whose path (or a directory name in it) matches GLOB (repeatable).")
    @triage_options
    @click.option("--no-compile", is_flag=True, help="Source-only analysis (skip nvcc).")
    @cc_option
    @click.option("--define", "-D", "defines", multiple=True, metavar="NAME=VALUE",
                  help="Value of a kernel parameter, template parameter or macro (repeatable).")
    @build_context_options
    @click.option("-j", "--jobs", "jobs", type=click.IntRange(1, 1024), default=None,
                  help="Processes at work at a time: a project's units are compiled first, N at a time, then "
                       "analysed, N at a time (-j 1 is serial; default: every core).")
    @click.option("--deadline", "deadline", type=click.FloatRange(1, 86400), default=None, metavar="SECONDS",
                  help="Hard limit on each file's analysis (parse, compile, models, rules), in a worker that is "
                       "stopped there; the file is reported in one line and the others finish. The project's launch "
                       "resolution (past it: each file with its own launches, said in one line) and the report's "
                       "rendering run under the same limits. [default: 60]")
    @click.option("--memory-cap", "memory_cap", type=click.IntRange(64, 1 << 20), default=None, metavar="MB",
                  help="Memory each file's worker (and the compiler it runs) may add before it is stopped. [default: 4096]")
    @click.option("--strict", is_flag=True, help="Exit 1 when a file was analysed source-only (it did not compile).")
    @no_cache_option
    @click.option("--show-all", "show_all", is_flag=True,
                  help="List every finding (by default info-level hygiene is one line per file and rule).")
    @click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
    @click.option("--instantiate", "instantiate", multiple=True, metavar="'KERNEL<ARGS>'",
                  help="Instantiate a template kernel, e.g. 'gemm<128,128,8>' (repeatable), in each file that "
                       "names it, so the compiled access model evaluates it.")
    def check_cmd(paths, fail_on, fmt, output, show_source, exclude, select, ignore, baseline, write_baseline,
                  min_priority, min_impact, no_compile, cc, defines, include_dirs, nvcc_flags, compile_commands,
                  no_config, trust_flags, deadline, memory_cap, jobs, strict, show_all, statistics, instantiate,
                  no_cache):
        """Analyze the .cu/.cuh files named or under each PATH; exit 1 with --fail-on when findings reach it."""
        from cudalens.api import check
        from cudalens.cli._triage import fails, refuse_clobber_all
        from cudalens.cli.cache import result_cache
        from cudalens.pipeline.result_cache import SUMMARY_FORMATS
        from cudalens.project.paths import collect_paths
        from cudalens.textio import printable
        from cudalens.triage import Triaged

        refuse_clobber_all(collect_paths(list(paths), tuple(exclude)), output, write_baseline)
        limits = _limits(deadline, memory_cap)
        cache = result_cache(no_cache)
        if cache is not None and (statistics or fmt in SUMMARY_FORMATS or fmt == "json"):  # (pipeline.result_cache)
            cache.view = "json" if fmt == "json" and not statistics else "summary"  # what these formats write, no more
        with _progress() as progress:
            report = check(list(paths), exclude=exclude, jobs=jobs, cc=cc, defines=list(defines),
                           compile=not no_compile, include_dirs=include_dirs, nvcc_flags=nvcc_flags,
                           compile_commands=compile_commands, use_config=not no_config, trust_flags=trust_flags,
                           select=select, ignore=ignore, baseline=baseline, min_priority=min_priority,
                           min_impact=min_impact, write_baseline=write_baseline, instantiate=instantiate,
                           progress=progress, file_limits=limits, cache=cache)
        from cudalens.report.emit import Style, emit

        result, triaged = report.analysis, Triaged((), dict(report.suppressed))
        for line in (*(f"warning: {w}" for w in report.warnings), *report.notes):
            click.echo(printable(f"cudalens: {line}"), err=True)
        style = Style(show_source=show_source, show_all=show_all)
        text = bounded_render(lambda: emit(report, "statistics" if statistics else fmt, style), limits)
        if output:
            from cudalens.textio import write_atomic

            try:
                write_atomic(output, text)
            except OSError as exc:
                raise InputError(f"{output}: cannot write ({exc.strerror})") from None
        elif text.strip():
            click.echo(text, nl=False)
        if fmt in ("concise", "github") and triaged.suppressed_total:
            click.echo(f"cudalens: {triaged.summary()}", err=True)
        broken = result.source_only
        if fmt in ("json", "sarif"):  # concise and github carry them in their lines
            for failure in broken:
                click.echo(printable(f"{failure.path}: compile-error: {failure.message()}"), err=True)
        for _path, reason in result.failed:
            click.echo(printable(f"cudalens: {reason}"), err=True)
        if result.failed:
            return 2
        return 1 if fails(result.findings, fail_on) or (strict and broken) else 0


def bounded_render(fn, limits):
    """``fn()`` (the report's text) in a worker under the deadline and memory cap a file has
    (pipeline.isolated); past either, one line and exit 2, and nothing is written."""
    from cudalens.errors import CudalensError
    from cudalens.pipeline.isolated import Stopped, mark, run_one

    def rendering():
        mark("render")
        return fn()

    try:
        return run_one(rendering, "the report", limits)
    except Stopped as exc:
        raise CudalensError(f"{exc}; no report written") from None


def _limits(deadline: float | None, memory_cap: int | None):
    from cudalens.pipeline.isolated import FileLimits

    d = FileLimits()
    return FileLimits(seconds=deadline or d.seconds, memory_mb=memory_cap or d.memory_mb)


class _progress:
    """A progress bar on standard error when it is a terminal; nothing otherwise."""

    def __init__(self) -> None:
        import sys

        self.bar = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)

    def __enter__(self):
        if self.bar is None:
            return None
        self.bar.start()
        task = self.bar.add_task("analyzing", total=None)  # the file count comes with the first call

        def advance(done: int, total: int, path: str) -> None:
            self.bar.update(task, completed=done, total=total, description=os.path.basename(path))

        return advance

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()
