"""I1: Shifts and masks for power-of-two division and modulo."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import device_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn
from cudalens.source.const_fold import const_eval


def _runtime_pow2_names(body: Any) -> dict[str, str]:
    """Variables of a function that hold ``1 << k`` for a run-time k: name -> shift amount text."""
    out: dict[str, str] = {}
    for n in syn.nodes_of(body, "declaration", "assignment_expression"):
        pairs: list[tuple[str, Any]] = []
        if n.type == "declaration":
            pairs = syn.declared_names(n)
        elif n.type == "assignment_expression" and syn.text(n.child_by_field_name("operator")) == "=":
            pairs = [(syn.text(n.child_by_field_name("left")), n.child_by_field_name("right"))]
        for name, value in pairs:
            v = syn.strip_parens(value)
            if v is None or v.type != "binary_expression":
                continue
            if syn.text(v.child_by_field_name("operator")) != "<<":
                continue
            one = const_eval(v.child_by_field_name("left"))
            k = v.child_by_field_name("right")
            if one is not None and one.value == 1 and const_eval(k) is None:
                out[name] = syn.text(k)
    return out


@rule("I1", name="division-by-runtime-power-of-two", layers="S")
def division_by_runtime_power_of_two(ctx: RuleContext) -> Iterator[Finding]:
    """Integer `/` or `%` by a power of two that the compiler cannot see.

    What it does:
        Flags `x / n` and `x % n` (and `/=`, `%=`) in device code where `n` is a power of two known
        only at run time: the built-in `warpSize`, or a variable set from `1 << k` with a run-time
        `k`. A literal divisor (`i / 32`, `i % 16`) is not flagged: the compiler already turns it
        into shifts and masks (with a couple of extra instructions for the rounding of negative
        signed values, which is not worth a finding).

    Why it matters:
        Integer division and modulo have no single instruction on the GPU; each becomes a sequence
        of some twenty instructions. When the divisor is a power of two, a shift and a mask give
        the same result for non-negative values in one instruction each, but the compiler can only
        use them when it can prove the divisor is a power of two.

    Example:
        ```cuda
        int lane = threadIdx.x % warpSize;
        int warp = threadIdx.x / warpSize;
        ```

    Fix:
        ```cuda
        int lane = threadIdx.x & 31;   // warpSize is 32 on every CUDA GPU so far
        int warp = threadIdx.x >> 5;
        // for n = 1 << k: i >> k and i & (n - 1)
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        pow2 = _runtime_pow2_names(fn.body)
        for n in syn.nodes_of(fn.body, "binary_expression", "assignment_expression"):
            if n.type == "binary_expression":
                op = syn.text(n.child_by_field_name("operator"))
            elif n.type == "assignment_expression":
                op = syn.text(n.child_by_field_name("operator")).rstrip("=")
            else:
                continue
            if op not in {"/", "%"}:
                continue
            rhs = syn.strip_parens(n.child_by_field_name("right"))
            name = syn.text(rhs) if rhs is not None and rhs.type == "identifier" else ""
            if name == "warpSize":
                alt = "& 31" if op == "%" else ">> 5"
                yield ctx.finding(
                    syn.line(n),
                    f"`{syn.text(n)}`: warpSize is read at run time, so this {'modulo' if op == '%' else 'division'}"
                    " compiles to an integer division sequence although the divisor is 32",
                    f"use `{alt}` (and a named constant for 32) instead of `{op} warpSize`",
                    kernel=fn.name,
                    facts=(("divisor", "warpSize"),),
                )
            elif name in pow2:
                k = pow2[name]
                alt = f"& ({name} - 1)" if op == "%" else f">> ({k})"
                yield ctx.finding(
                    syn.line(n),
                    f"`{syn.text(n)}`: `{name}` is `1 << {k}`, a power of two known only at run time, so the"
                    f" {'modulo' if op == '%' else 'division'} becomes a full integer division sequence",
                    f"use `{alt}` (valid for non-negative values)",
                    kernel=fn.name,
                    facts=(("divisor", name), ("shift", k)),
                )
