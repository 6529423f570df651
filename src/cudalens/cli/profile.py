"""`cudalens profile -- COMMAND [ARGS]`: trace a whole application and rank what to change first."""

from __future__ import annotations

import sys

import click

from cudalens.cli._build import build_options
from cudalens.cli._common import cc_option
from cudalens.errors import InputError


def _write(text: str, output: str | None) -> None:
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise InputError(f"{output}: cannot write ({exc.strerror})") from None
    else:
        click.echo(text, nl=False)


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
                trace_file, command, include_dirs, nvcc_flags, compile_commands, no_config,
                trust_flags=False) -> int:
    """Trace COMMAND (a CUDA binary or `python script.py`), assess where its GPU time goes, and give each top
    kernel's findings from every evidence available. Put `--` before the command."""
    from cudalens.api import profile

    if not command:
        raise click.UsageError("no command given: cudalens profile [OPTIONS] -- COMMAND [ARGS]")
    # the program's own output must not mix with a machine-readable report on stdout
    stdout = sys.stderr if fmt != "text" and not output and not trace_file else None
    from cudalens.report.emit import Style, emit

    report = profile(list(command), trace=trace_file, sources=sources, defines=list(defines), cc=cc, duration=duration,
                     launch_limit=launch_limit, counters=counters, top=top, counters_top=counters_top,
                     keep_trace=keep_trace, include_dirs=include_dirs, nvcc_flags=nvcc_flags,
                     compile_commands=compile_commands, use_config=not no_config, trust_flags=trust_flags,
                     stdout=stdout)
    _write(emit(report, fmt, Style(terminal=output is None and sys.stdout.isatty(), to_file=output is not None)),
           output)
    return 0


def register(group: click.Group) -> None:
    group.add_command(profile_cmd)
