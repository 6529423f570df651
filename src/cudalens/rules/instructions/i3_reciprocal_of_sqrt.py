"""I3: Reciprocal square root function."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._common import device_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.const_fold import const_eval

_SQRT = {"sqrt", "sqrtf"}


@rule("I3", name="reciprocal-of-sqrt", layers="S", supersedes=("I6",))
def reciprocal_of_sqrt(ctx: RuleContext) -> Iterator[Finding]:
    """`1 / sqrt(x)` written out instead of the reciprocal square root.

    What it does:
        Flags divisions whose numerator is the constant 1 and whose denominator is a call of
        `sqrt` or `sqrtf`, in device code.

    Why it matters:
        The GPU has a reciprocal square root instruction. Written as a division of a square root,
        the expression costs a square root and a division; the compiler only fuses the two in some
        flag combinations (it must keep IEEE-correct division and square root by default).

    Example:
        ```cuda
        float inv = 1.0f / sqrtf(d2);
        ```

    Fix:
        ```cuda
        float inv = rsqrtf(d2);   // rsqrt() for double
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        for n in syn.nodes_of(fn.body, "binary_expression"):
            if n.type != "binary_expression" or syn.text(n.child_by_field_name("operator")) != "/":
                continue
            num = const_eval(n.child_by_field_name("left"))
            den = syn.strip_parens(n.child_by_field_name("right"))
            if num is None or num.value != 1 or den is None or den.type != "call_expression":
                continue
            name = syn.call_name(den)
            if name not in _SQRT:
                continue
            args = syn.call_args(den)
            arg = syn.text(args[0]) if args else "x"
            alt = f"rsqrtf({arg})" if name == "sqrtf" else f"rsqrt({arg})"
            yield ctx.finding(
                syn.line(n),
                f"`{syn.text(n)}` computes a square root and a division",
                f"use `{alt}`",
                kernel=fn.name,
                facts=(("expression", syn.text(n)),),
            )
