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


def echo_json(data: Any) -> None:
    """Print one JSON document (sorted keys off: key order is part of readability)."""
    click.echo(json.dumps(data, indent=2, default=_default))


def _default(obj: Any) -> Any:
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")
