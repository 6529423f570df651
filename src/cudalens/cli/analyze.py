"""`cudalens analyze FILE.cu ...`: source (and compiled) findings for CUDA kernels."""

from __future__ import annotations

import click

from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError
from cudalens.findings import Priority


def register(group: click.Group) -> None:
    @group.command("analyze")
    @click.argument("files", nargs=-1, required=True)
    @click.option("--block", "block", default=None, metavar="X[,Y[,Z]]",
                  help="Block size the access model uses (default: the launch site's block, else 256).")
    @click.option("--define", "-D", "defines", multiple=True, metavar="NAME=VALUE",
                  help="Value of a kernel parameter, template parameter or macro (repeatable).")
    @click.option("--cc", default="9.0", show_default=True, help="Target compute capability.")
    @click.option("--fail-on", type=click.Choice(["high", "medium", "low"]), default=None,
                  help="Exit 1 when findings at or above this priority exist.")
    @click.option("--no-compile", is_flag=True, help="Source-only analysis (skip nvcc).")
    @format_option
    def analyze_cmd(files, block, defines, cc, fail_on, no_compile, fmt):
        """Analyze CUDA files: warp access model, divergence, pattern rules, compiled facts.

        The access model evaluates blocks blockIdx=(0,0,0) and (1,0,0), assumes 256-byte aligned
        pointers (cudaMalloc), loops at their first iteration, and tries unknown integer
        parameters at 2048 and 3136 (reporting only verdicts that agree).
        """
        from cudalens.access.model import parse_block, parse_defines
        from cudalens.analyze import analyze

        try:
            blk = parse_block(block) if block else None
            defs = parse_defines(list(defines))
        except ValueError as exc:
            raise InputError(str(exc)) from None
        result = analyze(list(files), block=blk, defines=defs, cc=cc, compile=not no_compile)
        if fmt == "json":
            echo_json(result.to_dict())
        else:
            from rich.console import Console

            from cudalens.report.terminal import render_analysis

            render_analysis(result, Console())
        if fail_on and result.at_or_above(Priority.parse(fail_on)):
            return 1
        return 0
