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

import json
import os

import click

from cudalens.cli._common import cc_option, show_source_option
from cudalens.errors import InputError
from cudalens.findings import Priority
from cudalens.report.frames import SourceText, finding_frame, with_frames


def summary_lines(result, show_all: bool = True, source=None) -> list[str]:
    """One header per file (finding counts by priority), then one line per finding, in ranked
    order with the estimated speedup beside the guide's priority (with its code frame when
    ``source``, path -> lines, is given: --show-source); without ``show_all``, info-level hygiene
    is collapsed to one line per rule (:mod:`cudalens.report.quiet`)."""
    from cudalens.report.quiet import split_hygiene
    from cudalens.report.terminal import speedup_text

    lines = []
    total: dict[str, int] = {}
    for fa in result.files:
        counts: dict[str, int] = {}
        for f in fa.findings:
            counts[f.priority.value] = counts.get(f.priority.value, 0) + 1
            total[f.priority.value] = total.get(f.priority.value, 0) + 1
        tally = ", ".join(f"{counts[p.value]} {p.value}" for p in Priority if p.value in counts) or "no findings"
        lines.append(f"{fa.model.path}: {tally}")
        if fa.failure is not None:
            lines.append(f"  {fa.failure.kind}: {fa.failure.message()}")
        listed, collapsed = (list(fa.findings), []) if show_all else split_hygiene(fa.findings)
        for f in listed:
            where = f"{f.line}:{f.column or 1}" if f.line else "-"
            gain = speedup_text(f)
            lines.append(f"  {where:>8}  {gain:>5} {f.priority.value:<10} {f.rule:<5} {f.message}")
            if source is not None:
                lines += finding_frame(f, source, indent=" " * 18)
        lines += [f"  {c}" for c in collapsed]
        lines += [f"  note: {n}" for n in fa.notes if not n.startswith(("not compiled (", "fix: "))]
        lines += [f"  kernel {k.name}: {k.launch.describe()}" + _launch_shape(k.launch)
                  for k in fa.model.kernels if k.launch is not None]
    tally = ", ".join(f"{total[p.value]} {p.value}" for p in Priority if p.value in total) or "no findings"
    broken = len(result.source_only)
    failed = len(getattr(result, "failed", ()))
    extra = (f"; {broken} analysed source-only (not compiled)" if broken else "") + (f"; {failed} not analyzed" if failed else "")
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
                  help="Files compiled at the same time (default: every core).")
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
        from cudalens.project.paths import collect_paths
        from cudalens.textio import printable
        from cudalens.triage import Triaged

        refuse_clobber_all(collect_paths(list(paths), tuple(exclude)), output, write_baseline)
        limits = _limits(deadline, memory_cap)
        with _progress() as progress:
            report = check(list(paths), exclude=exclude, jobs=jobs, cc=cc, defines=list(defines),
                           compile=not no_compile, include_dirs=include_dirs, nvcc_flags=nvcc_flags,
                           compile_commands=compile_commands, use_config=not no_config, trust_flags=trust_flags,
                           select=select, ignore=ignore, baseline=baseline, min_priority=min_priority,
                           min_impact=min_impact, write_baseline=write_baseline, instantiate=instantiate,
                           progress=progress, file_limits=limits, cache=result_cache(no_cache))
        result, triaged = report.analysis, Triaged((), dict(report.suppressed))
        for line in (*(f"warning: {w}" for w in report.warnings), *report.notes):
            click.echo(printable(f"cudalens: {line}"), err=True)
        text = bounded_render(lambda: render(result, triaged, "statistics" if statistics else fmt, show_all,
                                             show_source), limits)
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


def render(result, triaged, fmt: str, show_all: bool = True, show_source: bool = False) -> str:
    """The check report in ``fmt`` (or "statistics"); findings left out by triage are counted,
    never listed."""
    if fmt == "statistics":
        from cudalens.report.quiet import statistics_lines

        return "\n".join(statistics_lines(result.findings))
    source = SourceText({fa.model.path: fa.model.text for fa in result.files}) if show_source else None
    if fmt == "json":
        data = result.to_dict()
        data["suppressed"] = dict(triaged.suppressed)
        return json.dumps(data, indent=2, default=str)
    if fmt == "html":
        from cudalens.pipeline import guided_report
        from cudalens.report.html import render_html

        merged = guided_report(result)
        merged["suppressed"] = dict(triaged.suppressed)
        return render_html(merged, title="cudalens check")
    if fmt == "sarif":
        from cudalens.report.sarif import to_sarif
        from cudalens.rules.layers import STATIC_LAYERS
        from cudalens.rules.registry import rules_reading

        log = to_sarif(result.findings, rules_reading(STATIC_LAYERS), failures=result.source_only, notes=result.notes)
        log["runs"][0].setdefault("properties", {})["suppressed"] = dict(triaged.suppressed)
        return json.dumps(log, indent=2)
    if fmt in ("concise", "github"):
        from cudalens.report.concise import concise_lines, failure_github_lines, failure_lines, github_lines

        failed = (failure_lines if fmt == "concise" else failure_github_lines)(result.source_only)
        if source is not None and fmt == "concise":
            from cudalens.report.concise import by_place

            framed = with_frames(concise_lines(result.findings), by_place(result.findings), source)
            return "\n".join([*failed, *framed])
        return "\n".join([*failed, *(concise_lines if fmt == "concise" else github_lines)(result.findings)])
    lines = summary_lines(result, show_all, source)
    if triaged.suppressed_total:
        lines[-1] += f"; {triaged.summary()}"
    return "\n".join(lines)
