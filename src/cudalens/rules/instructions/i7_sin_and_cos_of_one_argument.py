"""I7: One sincos for sine and cosine of one argument."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import device_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn

_SIN = {"sin": "sincos", "sinf": "sincosf", "__sinf": "__sincosf", "sinpi": "sincospi", "sinpif": "sincospif"}


_COS = {"cos": "sincos", "cosf": "sincosf", "__cosf": "__sincosf", "cospi": "sincospi", "cospif": "sincospif"}


@rule("I7", name="sin-and-cos-of-one-argument", layers="S")
def sin_and_cos_of_one_argument(ctx: RuleContext) -> Iterator[Finding]:
    """Sine and cosine of the same argument computed separately.

    What it does:
        Flags a device function that calls both `sin` and `cos` (or `sinf`/`cosf`, `__sinf`/
        `__cosf`, `sinpi`/`cospi`) on the same argument, as written. The finding is on the first
        of the two calls.

    Why it matters:
        Both functions start with the same argument reduction. `sincos` computes the two results
        with one reduction, which saves most of the second call.

    Example:
        ```cuda
        float c = cosf(theta);
        float s = sinf(theta);
        ```

    Fix:
        ```cuda
        float s, c;
        sincosf(theta, &s, &c);
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        sins: dict[tuple[str, str], Any] = {}
        coss: dict[tuple[str, str], Any] = {}
        for c in syn.calls(fn.body):
            name = syn.call_name(c)
            args = syn.call_args(c)
            if len(args) != 1:
                continue
            key_arg = syn.norm(args[0])
            if name in _SIN:
                sins.setdefault((_SIN[name], key_arg), c)
            elif name in _COS:
                coss.setdefault((_COS[name], key_arg), c)
        for key in sorted(set(sins) & set(coss), key=lambda k: min(sins[k].start_byte, coss[k].start_byte)):
            a, b = sorted((sins[key], coss[key]), key=lambda n: n.start_byte)
            func, arg = key
            yield ctx.finding(
                syn.line(a),
                f"`{syn.text(a)}` and `{syn.text(b)}` (line {syn.line(b)}) reduce the same argument twice",
                f"compute both with `{func}({syn.text(syn.call_args(a)[0])}, &s, &c)`",
                kernel=fn.name,
                facts=(("argument", arg), ("lines", (syn.line(a), syn.line(b)))),
            )
