"""I9: exp2/exp10 for powers of 2 and 10."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding
from cudalens.rules._instructions import is_float_fn, pow_calls
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.const_fold import const_eval


@rule("I9", name="pow-of-two-or-ten", layers="S", supersedes=("I6",))
def pow_of_two_or_ten(ctx: RuleContext) -> Iterator[Finding]:
    """`pow(2, x)` or `pow(10, x)` instead of the dedicated exponentials.

    What it does:
        Flags `pow`/`powf` calls in device code whose base is the constant 2 or 10 and whose
        exponent is not a constant.

    Why it matters:
        `exp2` and `exp10` (and their `f` versions) compute these powers directly; `pow` goes
        through its general path (logarithm of the base, multiply, exponential) and special-case
        checks.

    Example:
        ```cuda
        float scale = powf(2.0f, e);
        ```

    Fix:
        ```cuda
        float scale = exp2f(e);   // exp10f(e) for base 10; ldexpf(1.0f, n) for an integer n
        ```
    """
    src = ctx.source
    for fn, c, base, expo in pow_calls(src):
        b = const_eval(base)
        if b is None or float(b.value) not in {2.0, 10.0} or const_eval(expo) is not None:
            continue
        f = "f" if is_float_fn(syn.call_name(c)) or b.kind == "float" else ""
        func = ("exp2" if b.value == 2 else "exp10") + f
        yield ctx.finding(
            syn.line(c),
            f"`{syn.text(c)}` raises {int(b.value)} to a run-time power through the general pow routine",
            f"use `{func}({syn.text(expo)})`",
            kernel=fn.name,
            facts=(("base", int(b.value)),),
        )
