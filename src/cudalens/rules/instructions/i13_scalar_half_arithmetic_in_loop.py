"""I13: Paired half-precision arithmetic."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import device_functions
from cudalens.rules._instructions import ARITH
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn

_HALF_TYPES = {"__half", "half", "__nv_bfloat16", "nv_bfloat16"}


_HALF_SCALAR_INTRINSICS = {
    "__hadd",
    "__hsub",
    "__hmul",
    "__hdiv",
    "__hfma",
    "__hneg",
    "__hadd_sat",
    "__hmul_sat",
    "__hfma_sat",
    "__hfma_relu",
}


def _half_names(fn_node: Any) -> set[str]:
    """Variables and pointer parameters of scalar half/bfloat16 type in a function."""
    out: set[str] = set()
    for n in syn.nodes_of(fn_node, "declaration", "parameter_declaration"):
        if n.type in {"declaration", "parameter_declaration"}:
            ty = syn.text(n.child_by_field_name("type")).replace("const", "").strip()
            if ty in _HALF_TYPES:
                if n.type == "declaration":
                    out.update(name for name, _ in syn.declared_names(n))
                else:
                    out.update(name for name, _ in syn.declared_names(n) if name)
    return out


def _is_half_operand(node: Any, halves: set[str]) -> bool:
    node = syn.strip_parens(node)
    if node is None:
        return False
    if node.type == "identifier":
        return syn.text(node) in halves
    if node.type == "subscript_expression":
        return syn.text(node.child_by_field_name("argument")) in halves
    return False


@rule("I13", name="scalar-half-arithmetic-in-loop", layers="S")
def scalar_half_arithmetic_in_loop(ctx: RuleContext) -> Iterator[Finding]:
    """Scalar `__half`/`__nv_bfloat16` arithmetic inside a loop.

    What it does:
        Flags loops in device code that do arithmetic (`+ - * /`, compound assignments, or the
        scalar intrinsics `__hadd`, `__hmul`, `__hfma`, ...) on variables or arrays of type
        `__half`, `half` or `__nv_bfloat16`. One finding per innermost loop, on its first such
        operation.

    Why it matters:
        The half-precision units process two values per instruction when they are packed in a
        `__half2` (`__nv_bfloat162`). Scalar half arithmetic uses half of that throughput; in a
        loop that is the bulk of the work.

    Example:
        ```cuda
        for (int i = tid; i < n; i += stride) y[i] = __hfma(a, x[i], y[i]);
        ```

    Fix:
        ```cuda
        // n even, data 4-byte aligned: process pairs
        for (int i = tid; i < n / 2; i += stride) y2[i] = __hfma2(a2, x2[i], y2[i]);
        ```
    """
    src = ctx.source
    for fn in device_functions(src):
        halves = _half_names(fn.node)
        if not halves:
            continue
        reported: set[int] = set()
        for n in syn.nodes_of(fn.body, "binary_expression", "assignment_expression", "call_expression"):
            hit = False
            if n.type == "binary_expression" and syn.text(n.child_by_field_name("operator")) in ARITH:
                hit = _is_half_operand(n.child_by_field_name("left"), halves) or _is_half_operand(
                    n.child_by_field_name("right"), halves
                )
            elif n.type == "assignment_expression" and syn.text(n.child_by_field_name("operator")) in {
                "+=",
                "-=",
                "*=",
                "/=",
            }:
                hit = _is_half_operand(n.child_by_field_name("left"), halves)
            elif n.type == "call_expression" and syn.call_name(n) in _HALF_SCALAR_INTRINSICS:
                hit = True
            if not hit:
                continue
            loops = syn.enclosing_loops(n)
            if not loops or loops[0].start_byte in reported:
                continue
            reported.add(loops[0].start_byte)
            yield ctx.finding(
                syn.line(n),
                f"scalar half-precision arithmetic `{syn.text(n)}` in the loop at line {syn.line(loops[0])}"
                " uses half of the half-precision throughput",
                "pack pairs into `__half2` / `__nv_bfloat162` and use the paired intrinsics (`__hadd2`, `__hfma2`, ...)",
                kernel=fn.name,
                facts=(("loop_line", syn.line(loops[0])),),
            )
