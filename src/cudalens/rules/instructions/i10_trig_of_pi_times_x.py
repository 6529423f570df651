"""I10: sinpi/cospi for arguments multiplied by pi."""

from __future__ import annotations

import math
from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import device_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.const_fold import parse_number

_TRIG = {
    "sin": "sinpi",
    "cos": "cospi",
    "sinf": "sinpif",
    "cosf": "cospif",
    "sincos": "sincospi",
    "sincosf": "sincospif",
}


_PI_NAMES = {"M_PI", "CUDART_PI", "CUDART_PI_F", "M_PI_F", "PI", "pi", "kPi", "PI_F"}


def _pi_names(src: Any) -> set[str]:
    names = set(_PI_NAMES)
    for name, value in (getattr(src, "defines", None) or {}).items():
        c = parse_number(str(value).strip("() "))
        if c is not None and abs(float(c.value) - math.pi) < 1e-3:
            names.add(name)
    return names


def _is_pi(node: Any, names: set[str]) -> bool:
    node = syn.strip_parens(node)
    if node is None:
        return False
    if node.type == "identifier":
        return syn.text(node) in names
    if node.type == "number_literal":
        c = parse_number(syn.text(node))
        return c is not None and c.kind != "int" and abs(float(c.value) - math.pi) < 1e-3
    return False


def _numerator_factors(node: Any) -> list[Any]:
    """Factors of a product, following `*` and the left side of `/`."""
    node = syn.strip_parens(node)
    if node is not None and node.type == "binary_expression":
        op = syn.text(node.child_by_field_name("operator"))
        if op == "*":
            return _numerator_factors(node.child_by_field_name("left")) + _numerator_factors(
                node.child_by_field_name("right")
            )
        if op == "/":
            return _numerator_factors(node.child_by_field_name("left"))
    return [node] if node is not None else []


@rule("I10", name="trig-of-pi-times-x", layers="S", supersedes=("I6",))
def trig_of_pi_times_x(ctx: RuleContext) -> Iterator[Finding]:
    """`sin(π·x)` written with an explicit π.

    What it does:
        Flags `sin`, `cos`, `sincos` (and `f` versions) in device code whose argument is a product
        with a factor π: `M_PI`, `CUDART_PI(_F)`, a `#define` equal to π, or a literal such as
        `3.14159f`.

    Why it matters:
        `sinpi(x)` computes sin(πx) without first multiplying by a rounded π, so it is both faster
        (a simpler argument reduction) and more accurate, especially for large `x`.

    Example:
        ```cuda
        float w = sinf(3.14159265f * x);
        ```

    Fix:
        ```cuda
        float w = sinpif(x);
        ```
    """
    src = ctx.source
    names = _pi_names(src)
    for fn in device_functions(src):
        for c in syn.calls(fn.body):
            name = syn.call_name(c)
            args = syn.call_args(c)
            if name not in _TRIG or not args:
                continue
            factors = _numerator_factors(args[0])
            if len(factors) < 2 or not any(_is_pi(f, names) for f in factors):
                continue
            yield ctx.finding(
                syn.line(c),
                f"`{syn.text(c)}` multiplies by π before the {name} call",
                f"use `{_TRIG[name]}()` on the argument divided by π (drop the π factor)",
                kernel=fn.name,
                facts=(("call", name),),
            )
