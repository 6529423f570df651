"""I6 at the source layer: accurate single-precision transcendentals in device loops.

The compiled layer (rules/compiled.py) sees the cost in SASS when it shows up as MUFU or slow-path
calls; the accurate ``sinf``/``cosf`` instead inline a range reduction and a polynomial (and a
local-memory slow path for large arguments) that no single SASS class betrays, so the call in the
source is the dependable evidence. Compiling with ``-use_fast_math`` maps these calls onto the
intrinsics, so kernels compiled that way are not flagged.
"""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding, Priority
from cudalens.rules import _syntax as syn
from cudalens.rules._common import device_functions, finding
from cudalens.rules.registry import RULES, rule

#: Rules that rewrite one math call into something better than its intrinsic (a multiplication,
#: cbrtf, exp2f, sinpif, rsqrtf): where one of them flags a line, that fix supersedes I6's.
_SPECIFIC_REWRITES = ("I3", "I5", "I8", "I9", "I10")
_SIN_COS = {"sinf": "cosf", "cosf": "sinf"}

#: accurate function -> the intrinsic that trades accuracy for speed (PG 5.4.1, BPG 11.1.6)
INTRINSIC = {
    "sinf": "__sinf",
    "cosf": "__cosf",
    "tanf": "__tanf",
    "sincosf": "__sincosf",
    "expf": "__expf",
    "exp10f": "__exp10f",
    "logf": "__logf",
    "log2f": "__log2f",
    "log10f": "__log10f",
    "powf": "__powf",
}


#: The last source model asked about and its rewritten lines: I6 asks twice per analysis (its
#: source and its compiled detector), and the rewrite rules read only the source.
_last_rewrites: list[tuple[Any, frozenset[int]]] = []


def lines_with_specific_rewrites(ctx: Any) -> set[int]:
    src = getattr(ctx, "source", None)
    if _last_rewrites and _last_rewrites[0][0] is src and src is not None:
        return set(_last_rewrites[0][1])
    lines: set[int] = set()
    for rule_id in _SPECIFIC_REWRITES:
        spec = RULES.get(rule_id)
        if spec is not None:
            lines |= {f.line for f in spec.check(ctx) if f.line}
    _last_rewrites[:] = [(src, frozenset(lines))]
    return lines


def _sin_cos_pairs(calls: list[Any]) -> set[int]:
    """ids of sinf/cosf calls whose argument (as written) also appears in the other function."""
    args: dict[str, set[str]] = {"sinf": set(), "cosf": set()}
    for c in calls:
        name = syn.call_name(c)
        if name in args and syn.call_args(c):
            args[name].add(syn.norm(syn.call_args(c)[0]))
    return {id(c) for c in calls
            if syn.call_name(c) in _SIN_COS and syn.call_args(c)
            and syn.norm(syn.call_args(c)[0]) in args[_SIN_COS[syn.call_name(c)]]}


def _fast_math(ctx: Any, kernel: str) -> bool:
    compiled = getattr(ctx, "compiled", None) or {}
    k = compiled.get(kernel)
    flags = getattr(k, "flags", ()) or ()
    return any(f in ("-use_fast_math", "--use_fast_math") for f in flags)


@rule(id="I6", name="accurate-math-slow-paths", priority=Priority.MEDIUM, section="BPG 11.1.6, PG 5.4", layers="S")
def check_i6_source(ctx: Any) -> Iterator[Finding]:
    """Accurate single-precision transcendentals called inside loops of device code.

    What it does:
        Flags calls to `sinf`, `cosf`, `tanf`, `sincosf`, `expf`, `exp10f`, `logf`, `log2f`,
        `log10f` and `powf` that sit inside a loop of a kernel or device function, unless the
        kernel was compiled with `-use_fast_math`. One finding per function and name, at the
        first such call. A call that a more specific rule rewrites is left to that rule: `powf`
        with a small integer or fractional exponent (I8, I5), base 2 or 10 (I9), `sinf(pi * x)`
        (I10), `1.0f / sqrtf(x)` (I3), and `sinf(x)` with `cosf(x)` of the same argument (I7).

    Why it matters:
        The accurate functions meet tight error bounds with a range reduction and a polynomial;
        `sinf` and `cosf` also carry a slow path for large arguments that spills to local memory.
        The intrinsics (`__sinf`, `__expf`, ...) are single special-function-unit instructions
        with larger, documented errors. In a loop that is dominated by such calls the difference
        is several times the run time (the math-intrinsics lab measures it on your GPU).

    Example:
        ```cuda
        for (int k = 0; k < n; k++) acc += sinf(x0 + k * dx);
        ```

    Fix:
        Where the accuracy of the intrinsic is enough (check it against a reference), call it:
        ```cuda
        for (int k = 0; k < n; k++) acc += __sinf(x0 + k * dx);
        ```
        or compile the file with `-use_fast_math`.
    """
    src = ctx.source
    rewritten = lines_with_specific_rewrites(ctx)
    for fn in device_functions(src):
        if _fast_math(ctx, fn.name):
            continue
        calls = syn.calls(fn.node)
        paired = _sin_cos_pairs(calls)  # I7's case: sincosf replaces both calls
        seen: set[str] = set()
        for call in calls:
            name = syn.call_name(call)
            if name not in INTRINSIC or name in seen or not syn.enclosing_loops(call):
                continue
            if syn.line(call) in rewritten or id(call) in paired:
                continue
            seen.add(name)
            yield finding(
                "I6", src, syn.line(call),
                f"`{name}` is called in a loop of {fn.name}: the accurate routine costs a range reduction "
                f"and a polynomial per call",
                f"use `{INTRINSIC[name]}` where its accuracy suffices, or compile with -use_fast_math",
                kernel=fn.name, facts=(("function", name),),
            )
