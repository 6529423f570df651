"""Test helpers over our own kernel sources: the line holding a text, a PTX module's entry by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def line_of(source: Path, text: str) -> int:
    """The (1-based) line of ``source`` holding ``text``: tests name lines by their text, so they do
    not depend on line shifts."""
    return next(i for i, t in enumerate(source.read_text().splitlines(), 1) if text in t)


def entry(module: Any, name: str, exact: bool = False) -> Any:
    """The entry of a PTX module whose (mangled) name contains ``name`` (is ``name``, with ``exact``)."""
    return next(f for f in module.entries if (f.name == name if exact else name in f.name))
