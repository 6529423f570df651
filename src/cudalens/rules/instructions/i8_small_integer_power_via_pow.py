"""I8: Multiplication for small integer powers."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._instructions import pow_calls
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.const_fold import const_eval


@rule("I8", name="small-integer-power-via-pow", layers="S", supersedes=("I6",))
def small_integer_power_via_pow(ctx: RuleContext) -> Iterator[Finding]:
    """`pow()` with a small constant integer exponent.

    What it does:
        Flags `pow`/`powf` calls in device code whose exponent is the constant 2, 3 or 4 (written
        as `2`, `2.0`, `3.0f`, ...).

    Why it matters:
        `pow` handles any real exponent, with a logarithm, an exponential and special cases; for a
        square or a cube one or two multiplications give the result much faster (and exactly
        rounded for the square).

    Example:
        ```cuda
        float e = powf(dx, 2.0f) + powf(dy, 2.0f);
        ```

    Fix:
        ```cuda
        float e = dx * dx + dy * dy;
        ```
    """
    src = ctx.source
    for fn, c, base, expo in pow_calls(src):
        e = const_eval(expo)
        if e is None or float(e.value) not in {2.0, 3.0, 4.0}:
            continue
        k = int(e.value)
        b = syn.text(base)
        alt = " * ".join([b if base.type == "identifier" else "t"] * k)
        if base.type != "identifier":
            alt = f"t = {b}; {alt}"
        yield ctx.finding(
            syn.line(c),
            f"`{syn.text(c)}` computes a power {k} with the general pow routine",
            f"multiply: `{alt}`",
            kernel=fn.name,
            facts=(("exponent", k),),
        )
