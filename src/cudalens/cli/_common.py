"""Helpers shared by the command modules: output format option and JSON printing."""

from __future__ import annotations

import json
from typing import Any

import click

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)


def cc_option(fn: Any) -> Any:
    """``--cc``: the target compute capability, resolved the same way by every command
    (:mod:`cudalens.hardware.target`: the option, ``[tool.cudalens] cc``, the GPU's, else 9.0)."""
    from cudalens.hardware.target import CC_HELP

    return click.option("--cc", "cc", default=None, metavar="MAJOR.MINOR", help=CC_HELP)(fn)


show_source_option = click.option(
    "--show-source", "show_source", is_flag=True,
    help="Show each finding's source lines with a caret under its column (text and concise formats), "
         "as ruff and clang-tidy print them.")


def report_console(file: Any = None, terminal: bool = False) -> Any:
    """A rich console for a report: the terminal's width on a TTY; piped or written to a file, no
    width limit (a value is never cut or wrapped at 80 columns) and no colour codes. Text from files
    and names (terminal escapes, bidirectional overrides) is shown inert. ``terminal``: ``file`` stands
    for a TTY (the report is rendered elsewhere and printed there)."""
    import sys

    from rich.console import Console

    class SafeConsole(Console):
        def print(self, *objects: Any, **kw: Any) -> None:
            from rich.table import Table
            from rich.text import Text

            from cudalens.textio import neutral

            def safe(o: Any) -> Any:
                if isinstance(o, str):
                    return neutral(o)
                if isinstance(o, Text):
                    return Text(neutral(o.plain), style=o.style, justify=o.justify, spans=o.spans)
                if isinstance(o, Table):  # its cells, in place
                    for col in o.columns:
                        col._cells[:] = [safe(c) for c in col._cells]
                return o

            super().print(*[safe(o) for o in objects], **kw)

    stream = file if file is not None else sys.stdout
    if file is None and stream.isatty():
        return SafeConsole()
    if terminal:  # a report rendered (in a worker) for the terminal: its width and colours
        import shutil

        return SafeConsole(file=stream, force_terminal=True, width=shutil.get_terminal_size().columns)
    return SafeConsole(file=stream, width=100_000, soft_wrap=True, force_terminal=False, color_system=None)


def echo_json(data: Any) -> None:
    """Print one JSON document (sorted keys off: key order is part of readability)."""
    click.echo(json.dumps(data, indent=2, default=_default))


def _default(obj: Any) -> Any:
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")
