"""I6: Fast intrinsics where precision allows."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding, Layer
from cudalens.rules._common import device_functions
from cudalens.rules._compiled import busiest_line, compiled_kernels, line_or_kernel
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import Confirmation, rule
from cudalens.source import syntax as syn

#: I6: this many MUFU instructions (besides those of integer division) count as transcendental-heavy.
MUFU_HEAVY = 8


def _math_in_a_loop(ctx: RuleContext, name: str, k: Any) -> bool:
    """Some MUFU or slow-path line of the kernel lies in a loop of its source that runs more than
    once per thread (not a grid-stride loop); True when the source gives no loops to judge by."""
    from cudalens.source.trips import trip_count

    src_kernel = next((sk for sk in ctx.source.kernels if sk.name == name), None)
    if src_kernel is None:
        return True
    lines = [ln for ln, c in k.sass_by_line.items() if c.get("mufu") or c.get("slowpath_call")]
    loops = [lp for lp in src_kernel.loops if trip_count(lp, ctx.source.defines)[1] != "grid-stride"]
    return any(lp.line <= ln <= lp.end_line for ln in lines for lp in loops)


@rule(
    "I6",
    name="accurate-math-slow-paths",
    layers="S C L",
    confirmed_by=Confirmation(
        ("mufu", "slowpath_call", "fp64", "f2f"), "MUFU, slow-path calls or FP64/F2F reduction work"
    ),
    one_per=("function",),
    kernel_wide=True,
)
def accurate_math_in_sass(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Reports kernels whose SASS shows the cost of full-precision math: calls to the accurate
    slow paths (division, square root), FP64 work inside single-precision math functions
    (the large-argument reduction of sinf/cosf), or many MUFU instructions.

    Why it matters
    ``sinf``, ``expf``, ``/`` and ``sqrtf`` are correctly rounded (or nearly so) at the price of
    extra instructions and branches; the intrinsics ``__sinf``, ``__expf``, ``__fdividef`` and
    ``rsqrtf`` map onto single MUFU operations. Where precision allows, the difference can dominate
    a math-heavy kernel.

    Example
        b[i] = sinf(a[i]) * expf(a[i]) / sqrtf(a[i] + 1.0f);

    Fix
    Use the intrinsics where their accuracy is enough (``__sinf``, ``__expf``, ``__fdividef``,
    ``rsqrtf``), or compile with ``-use_fast_math``; measure the accuracy you give up. A kernel
    where a more specific rewrite rule (I3, I5, I8, I9, I10) fired is left to that rule.
    """
    for name, k in compiled_kernels(ctx):
        if "-use_fast_math" in k.flags or "--use_fast_math" in k.flags:
            continue
        slow = k.count("slowpath_call")
        mufu = max(0, k.count("mufu") - k.count("int_div"))
        fp64 = k.count("fp64", "f2f")
        if slow == 0 and mufu < MUFU_HEAVY and not (fp64 and mufu):
            continue
        if not _math_in_a_loop(ctx, name, k):
            continue  # once per thread (a division, one sqrt): not a math-heavy kernel
        yield ctx.finding(
            line_or_kernel(ctx, name, busiest_line(k, "mufu", "slowpath_call")),
            f"kernel {name} runs full-precision math: {slow} slow-path call(s), {mufu} MUFU "
            f"instruction(s), {fp64} FP64/F2F instruction(s) from math functions",
            "use __sinf/__expf/__fdividef/rsqrtf (or -use_fast_math) where the accuracy suffices",
            kernel=name,
            layer=Layer.COMPILED,
            facts=(("slowpath_calls", slow), ("mufu", mufu), ("fp64_f2f", fp64)),
        )


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


def _sin_cos_pairs(calls: list[Any]) -> set[int]:
    """ids of sinf/cosf calls whose argument (as written) also appears in the other function."""
    args: dict[str, set[str]] = {"sinf": set(), "cosf": set()}
    for c in calls:
        name = syn.call_name(c)
        if name in args and syn.call_args(c):
            args[name].add(syn.norm(syn.call_args(c)[0]))
    return {
        id(c)
        for c in calls
        if syn.call_name(c) in _SIN_COS
        and syn.call_args(c)
        and syn.norm(syn.call_args(c)[0]) in args[_SIN_COS[syn.call_name(c)]]
    }


def _fast_math(ctx: RuleContext, kernel: str) -> bool:
    k = (ctx.compiled or {}).get(kernel)
    flags = k.flags if k is not None else ()
    return any(f in ("-use_fast_math", "--use_fast_math") for f in flags)


@rule("I6", name="accurate-math-slow-paths", layers="S")
def accurate_math_in_loops(ctx: RuleContext) -> Iterator[Finding]:
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
    for fn in device_functions(src):
        if _fast_math(ctx, fn.name):
            continue
        calls = syn.calls(fn.node)
        paired = _sin_cos_pairs(calls)  # I7's case: sincosf replaces both calls
        for call in calls:
            name = syn.call_name(call)
            if name not in INTRINSIC or not syn.enclosing_loops(call) or id(call) in paired:
                continue
            # the registry keeps the first call per function and name that no rewrite rule
            # (I3, I5, I8, I9, I10: they supersede I6) flags on its line: one_per=("function",)
            yield ctx.finding(
                syn.line(call),
                f"`{name}` is called in a loop of {fn.name}: the accurate routine costs a range reduction "
                f"and a polynomial per call",
                f"use `{INTRINSIC[name]}` where its accuracy suffices, or compile with -use_fast_math",
                kernel=fn.name,
                facts=(("function", name),),
            )
