"""I16: Precision-relaxing compiler flags."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding, Layer
from cudalens.rules._compiled import busiest_line, compiled_kernels, line_or_kernel
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule


@rule("I16", name="precision-flags", layers="C", advisory=True)
def precision_flags(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Notes kernels that run IEEE-accurate single-precision division or square root (slow-path
    calls in SASS) while compiled without ``-ftz=true``, ``-prec-div=false`` or
    ``-prec-sqrt=false`` (or ``-use_fast_math``, which implies all three).

    Why it matters
    By default nvcc compiles ``/`` and ``sqrtf`` to correctly rounded sequences and keeps
    denormals. The three flags trade that accuracy for shorter code; whether that is acceptable
    is the author's call, so this is information, not a defect.

    Example
        nvcc -arch=sm_90 k.cu                      // x / y -> call to the division slow path

    Fix
    If the accuracy is not needed, add ``-ftz=true -prec-div=false -prec-sqrt=false`` (or
    ``-use_fast_math``) and measure the effect.
    """
    for name, k in compiled_kernels(ctx):
        flags = set(k.flags)
        if flags & {"-use_fast_math", "--use_fast_math"}:
            continue
        missing = [f for f in ("-ftz=true", "-prec-div=false", "-prec-sqrt=false") if f not in flags]
        slow = k.count("slowpath_call")
        if not missing or slow == 0:
            continue
        yield ctx.finding(
            line_or_kernel(ctx, name, busiest_line(k, "slowpath_call")),
            f"kernel {name} calls {slow} accurate division/square-root slow path(s); compiled "
            f"without {', '.join(missing)}",
            f"if the accuracy is not needed, compile with {' '.join(missing)} (or -use_fast_math)",
            kernel=name,
            layer=Layer.COMPILED,
            facts=(("slowpath_calls", slow), ("missing_flags", missing)),
        )
