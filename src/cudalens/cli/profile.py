"""`cudalens profile -- COMMAND [ARGS]`: trace a whole application and rank what to change first."""

from __future__ import annotations

import json
import sys

import click

from cudalens.cli._build import build_options, make_build
from cudalens.cli._common import cc_option, report_console
from cudalens.errors import InputError


def _write(text: str, output: str | None) -> None:
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise InputError(f"{output}: cannot write ({exc.strerror})") from None
    else:
        click.echo(text)


@click.command("profile", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@build_options
@click.option("--duration", type=float, default=None, help="Stop the program after this many seconds.")
@click.option("--launch-limit", type=int, default=0, show_default=True,
              help="Record only the first N kernel launches (0: all).")
@click.option("--counters", is_flag=True, help="Also read Nsight Compute counters of the top kernels (one launch "
              "each); without permission the profile falls back to the trace.")
@click.option("--top", type=int, default=5, show_default=True, help="Kernels analyzed and reported as findings.")
@click.option("--counters-top", type=int, default=3, show_default=True, help="Kernels profiled with --counters.")
@click.option("--source", "sources", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="CUDA source file of the program's kernels (repeatable), for the static models.")
@click.option("-D", "--define", "defines", multiple=True, metavar="NAME=VALUE",
              help="Value of a kernel parameter or macro for the static models (repeatable), as in analyze.")
@cc_option
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html", "sarif"]), default="text",
              show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write the report here.")
@click.option("--keep-trace", type=click.Path(dir_okay=False), default=None,
              help="Keep the raw trace (cudalens trace format) at this path.")
@click.option("--trace", "trace_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Report on a trace saved with --keep-trace instead of running the command.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def profile_cmd(duration, launch_limit, counters, top, counters_top, sources, defines, cc, fmt, output, keep_trace,
                trace_file, command, include_dirs, nvcc_flags, compile_commands, no_config) -> int:
    """Trace COMMAND (a CUDA binary or `python script.py`), assess where its GPU time goes, and give each top
    kernel's findings from every evidence available. Put `--` before the command."""
    from cudalens.trace.app import Options, profile_application, report_from_trace

    if not command:
        raise click.UsageError("no command given: cudalens profile [OPTIONS] -- COMMAND [ARGS]")
    if top < 1 or counters_top < 0:
        raise click.BadParameter("must be at least 1", param_hint="--top")
    pairs: tuple[tuple[str, str], ...] = ()
    if defines:  # the access model (numpy with it) only when asked: nothing heavy before the program starts
        from cudalens.access.model import parse_defines

        pairs = tuple(parse_defines(list(defines)).items())
    build = None
    if sources or include_dirs or nvcc_flags or compile_commands:
        build = make_build(list(sources), include_dirs, nvcc_flags, compile_commands, no_config)
    opts = Options(defines=pairs, build=build, duration=duration, launch_limit=launch_limit, counters=counters, top=top,
                   counters_top=counters_top, sources=tuple(sources), cc=cc, keep_trace=keep_trace)
    if trace_file:
        from cudalens.trace.records import parse_file

        report = report_from_trace(parse_file(trace_file), command, opts)
    else:
        # the program's own output must not mix with a machine-readable report on stdout
        stdout = sys.stderr if fmt != "text" and not output else None
        report = profile_application(command, opts, stdout=stdout)
    if fmt == "json":
        _write(json.dumps(report, indent=2), output)
    elif fmt == "sarif":
        from cudalens.report.profile_html import sarif_log

        _write(json.dumps(sarif_log(report), indent=2), output)
    elif fmt == "html":
        from cudalens.report.profile_html import render_html

        _write(render_html(report), output)
    else:
        from cudalens.report.profile_terminal import render_profile

        if output:
            with open(output, "w", encoding="utf-8") as fh:
                render_profile(report, report_console(fh))
        else:
            render_profile(report, report_console())
    return 0


def register(group: click.Group) -> None:
    group.add_command(profile_cmd)
