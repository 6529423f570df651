"""`cudalens doctor`: which CUDA tools, GPU and profiler cudalens found, and how to fix gaps."""

from __future__ import annotations

import click

from cudalens.cli._common import echo_json, format_option
from cudalens.report.console import report_console


def register(group: click.Group) -> None:
    @group.command("doctor")
    @click.option("--toolchain", "mode", type=click.Choice(["auto", "wheel", "system"]), default=None,
                  help="Tool preference (default: $CUDALENS_TOOLCHAIN or auto).")
    @format_option
    def doctor(mode: str | None, fmt: str) -> None:
        """Show the CUDA toolchain (path, version, origin), the header families nvcc finds (and the
        command that adds a missing one), the GPU and driver, and Nsight Compute."""
        from rich.table import Table
        from rich.text import Text

        from cudalens.compiled.doctor import report

        data = report(mode)
        if fmt == "json":
            echo_json(data)
            return
        console = report_console()
        tc = data["toolchain"]
        table = Table(title=f"CUDA toolchain (CUDALENS_TOOLCHAIN={tc['mode']})")
        for col in ("tool", "version", "origin", "path"):
            table.add_column(col)
        for name, tool in tc["tools"].items():
            if tool is None:
                table.add_row(name, "-", "[red]missing[/red]", "")
            else:
                table.add_row(name, tool["version"] or "?", tool["origin"], tool["path"])
        table.add_row("demangler", "", "", tc["demangler"] or "[yellow]none[/yellow]")
        table.add_row("host compiler", "", "", tc["host_compiler"] or "[red]none[/red]")
        console.print(table)
        headers = Table(title="CUDA headers (what nvcc finds)")
        for col in ("family", "header", "from", "fix"):
            headers.add_column(col)
        for family, h in data["headers"].items():
            # the fix as text, not markup: rich would take the [cuda-libs] of pip's extra for a style tag
            headers.add_row(family, h["header"], h["from"] or "[red]missing[/red]", Text(h["fix"] or ""))
        console.print(headers)
        gpu = data["gpu"]
        if gpu["available"]:
            for d in gpu["devices"]:
                console.print(f"GPU {d['index']}: {d['name']} (CC {d['cc']}), driver {gpu['driver'] or '?'}")
        else:
            console.print(f"GPU: none ({gpu['why']}); compiled analysis works without one, --cc defaults to 9.0")
        ncu = data["ncu"]
        console.print(f"Nsight Compute: {ncu['path'] + ' ' + (ncu['version'] or '') if ncu['path'] else 'not found'}")
        for name, fix in data["fixes"].items():
            console.print(f"fix ({name}): {fix}", soft_wrap=True, markup=False)
