"""I5: Roots instead of pow for fractional exponents."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._instructions import is_float_fn, pow_calls
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.const_fold import const_eval

# exponent -> (double form, float form); `x` stands for the base.
_FRACTIONS: dict[tuple[int, int], str] = {
    (1, 2): "sqrt(x)",
    (-1, 2): "rsqrt(x)",
    (1, 3): "cbrt(x)",
    (-1, 3): "rcbrt(x)",
    (1, 4): "sqrt(sqrt(x))",
    (-1, 4): "rsqrt(sqrt(x))",
    (1, 6): "cbrt(sqrt(x))",
    (-1, 6): "rcbrt(sqrt(x))",
    (1, 9): "cbrt(cbrt(x))",
    (-1, 9): "rcbrt(cbrt(x))",
    (2, 3): "r = cbrt(x); r * r",
    (-2, 3): "r = rcbrt(x); r * r",
    (3, 4): "r = sqrt(x); r * sqrt(r)",
    (-3, 4): "r = rsqrt(x); r * sqrt(r)",
    (4, 3): "x * cbrt(x)",
    (-4, 3): "rcbrt(x) / x",
    (3, 2): "x * sqrt(x)",
    (-3, 2): "rsqrt(x) / x",
    (5, 4): "x * sqrt(sqrt(x))",
    (-5, 4): "rsqrt(sqrt(x)) / x",
    (7, 6): "x * cbrt(sqrt(x))",
    (-7, 6): "rcbrt(sqrt(x)) / x",
}


def _float_form(expr: str) -> str:
    for f in ("rsqrt", "rcbrt", "sqrt", "cbrt"):
        expr = expr.replace(f"{f}(", f"{f}\0(")
    return expr.replace("\0", "f")


def _match_fraction(value: float) -> tuple[int, int] | None:
    for p, q in _FRACTIONS:
        if abs(value - p / q) < 1e-3:
            return (p, q)
    return None


def _is_truncating_int_division(node: Any) -> bool:
    node = syn.strip_parens(node)
    if node is None or node.type != "binary_expression" or syn.text(node.child_by_field_name("operator")) != "/":
        return False
    a = const_eval(node.child_by_field_name("left"))
    b = const_eval(node.child_by_field_name("right"))
    return a is not None and b is not None and a.kind == b.kind == "int" and b.value != 0 and a.value % b.value != 0


@rule("I5", name="fractional-power-via-pow", layers="S", supersedes=("I6",))
def fractional_power_via_pow(ctx: RuleContext) -> Iterator[Finding]:
    """`pow()` with a constant fractional exponent that roots express faster.

    What it does:
        Flags `pow`/`powf` calls in device code whose exponent folds to one of ±1/2, ±1/3, ±1/4,
        ±1/6, ±1/9, ±2/3, ±3/4, ±4/3, ±3/2, ±5/4, ±7/6, and suggests the equivalent built from
        `sqrt`, `rsqrt`, `cbrt` and `rcbrt`. It also flags exponents written as an integer division
        such as `1/3`, which C++ evaluates to 0.

    Why it matters:
        `pow` is a general routine (logarithm, multiply, exponential, plus special-case handling).
        The root functions are much cheaper and usually at least as accurate. Note the sign
        handling differs: `cbrt` accepts negative arguments where `pow(x, 1.0/3)` returns NaN.

    Example:
        ```cuda
        float r = powf(v, 1.0f / 3.0f);
        float s = pow(d, -0.5);
        ```

    Fix:
        ```cuda
        float r = cbrtf(v);
        float s = rsqrt(d);
        ```
    """
    src = ctx.source
    for fn, c, base, expo in pow_calls(src):
        value = const_eval(expo)
        if value is not None and _is_truncating_int_division(expo):
            yield ctx.finding(
                syn.line(c),
                f"`{syn.text(c)}`: the exponent `{syn.text(expo)}` is an integer division and equals"
                f" {value.value}",
                "write the exponent in floating point, or better use the root function it stands for"
                " (e.g. `cbrt(x)` for 1/3)",
                kernel=fn.name,
                facts=(("exponent", syn.text(expo)),),
            )
            continue
        e = const_eval(expo)
        if e is None or e.kind == "int":
            continue
        frac = _match_fraction(float(e.value))
        if frac is None:
            continue
        alt = _FRACTIONS[frac]
        if is_float_fn(syn.call_name(c)) or e.kind == "float":
            alt = _float_form(alt)
        alt = alt.replace("x", syn.text(base)) if base.type == "identifier" else alt
        yield ctx.finding(
            syn.line(c),
            f"`{syn.text(c)}` raises to the constant power {frac[0]}/{frac[1]} with the general pow routine",
            f"use `{alt}`",
            kernel=fn.name,
            facts=(("exponent", f"{frac[0]}/{frac[1]}"),),
        )
