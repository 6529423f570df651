"""I12: Cost of integer division and modulo."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding, Layer
from cudalens.rules._compiled import compiled_kernels, line_or_kernel
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import Confirmation, rule


@rule(
    "I12",
    name="integer-division",
    layers="C",
    confirmed_by=Confirmation(("int_div",), "integer division sequences"),
)
def integer_division(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Finds integer division and modulo by values unknown at compile time in the SASS (the
    reciprocal sequence starting with I2F.RP, or a call to the 64-bit division subroutine).

    Why it matters
    GPUs have no integer divide instruction: a 32-bit ``a / b`` becomes about twenty instructions,
    a 64-bit one a subroutine call. Division by a compile-time constant is cheap (a multiply-high)
    and by a power of two is a shift.

    Example
        b[i] = a[i] / buckets + a[i] % buckets;    // buckets is a kernel argument

    Fix
    Make the divisor a compile-time constant (template parameter), use a power of two with
    ``>>`` and ``&``, or precompute a reciprocal/magic number on the host.
    """
    for name, k in compiled_kernels(ctx):
        n = k.count("int_div")
        if n == 0:
            continue
        lines = k.lines_with("int_div")
        candidates: list[int | None] = [*sorted(lines)] or [None]
        for line in candidates:
            count = lines.get(line, n) if line is not None else n
            yield ctx.finding(
                line_or_kernel(ctx, name, line),
                f"{count} integer division/modulo sequence(s) by a run-time divisor in {name}",
                "divide by a compile-time constant or a power of two (shift and mask), or hoist a "
                "precomputed reciprocal",
                kernel=name,
                layer=Layer.COMPILED,
                facts=(("int_div_sequences", count),),
            )
