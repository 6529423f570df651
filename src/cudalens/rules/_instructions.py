"""Helpers shared by the instruction rules (I5, I8, I9 read pow calls; I4, I13 arithmetic operators)."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.rules._common import device_functions
from cudalens.source import syntax as syn

ARITH = {"+", "-", "*", "/"}


POW = {"pow", "powf", "__powf"}


def is_float_fn(call_name: str) -> bool:
    return call_name.endswith("f")


def pow_calls(src: Any) -> Iterator[tuple[Any, Any, Any, Any]]:
    """(function, call, base node, exponent node) for every two-argument pow in device code."""
    for fn in device_functions(src):
        for c in syn.calls(fn.body):
            if syn.call_name(c) in POW:
                args = syn.call_args(c)
                if len(args) == 2:
                    yield fn, c, args[0], args[1]
