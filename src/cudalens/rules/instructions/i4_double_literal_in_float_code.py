"""I4: No accidental double precision."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import device_functions
from cudalens.rules._instructions import ARITH
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import Confirmation, rule
from cudalens.source import syntax as syn
from cudalens.source.const_fold import const_eval, has_non_constant, parse_number


def _types_used(fn_node: Any) -> set[str]:
    out = set()
    for n in syn.nodes_of(fn_node, "primitive_type", "type_identifier"):
        if n.type in {"primitive_type", "type_identifier"}:
            out.add(syn.text(n))
    return out


def _double_macros(src: Any) -> dict[str, str]:
    """Object-like macros of the file whose value is a double literal (``#define ETA 0.3``)."""
    out = {}
    for name, value in (getattr(src, "defines", None) or {}).items():
        c = parse_number(str(value).strip().strip("()").strip())
        if c is not None and c.kind == "double":
            out[name] = str(value).strip()
    return out


def _constant_root(lit: Any) -> Any:
    """Climb from a literal through the enclosing constant subexpression."""
    node = lit
    while node.parent is not None:
        p = node.parent
        if p.type in {"parenthesized_expression"}:
            node = p
            continue
        if p.type == "unary_expression" and const_eval(p) is not None:
            node = p
            continue
        if p.type == "binary_expression" and const_eval(p) is not None:
            node = p
            continue
        break
    return node


@rule(
    "I4",
    name="double-literal-in-float-code",
    layers="S C",
    confirmed_by=Confirmation(("fp64", "f2f"), "FP64/F2F instructions"),
)
def double_literal_in_float_code(ctx: RuleContext) -> Iterator[Finding]:
    """Double-precision constant in single-precision arithmetic.

    What it does:
        Flags floating-point literals without an `f` suffix (`0.5`, `1e-3`, `2.0`) used as an
        operand of `+ - * /` (or `+= -= *= /=`) next to a non-constant operand, in device functions
        that work in `float` and declare nothing as `double`. Functions that use `double` on purpose
        are left alone; so are literals that only initialize a variable (`float a = 0.5;` is
        converted at compile time) and comparisons.

    Why it matters:
        C++ promotes `x * 0.5` to double when `x` is a float: the value is converted to double, the
        multiply runs on the double-precision units (a small fraction of the float throughput on
        most GPUs) and the result is converted back. The compiler can narrow a single operation back
        to float only when the constant is exact in float and the result is stored as float at once;
        the compiled layer (F2F and DMUL/DFMA in SASS) tells which case occurred.

    Example:
        ```cuda
        y[i] = 0.5 * x[i] + 0.1;
        ```

    Fix:
        ```cuda
        y[i] = 0.5f * x[i] + 0.1f;
        ```
    """
    src = ctx.source
    macros: dict[str, str] | None = None  # the same for every function of the file: read once
    for fn in device_functions(src):
        types = _types_used(fn.node)
        if "double" in types or not any(t.startswith("float") for t in types):
            continue
        seen: set[tuple[int, int]] = set()
        macros = _double_macros(src) if macros is None else macros
        kinds = ("number_literal", "identifier") if macros else ("number_literal",)  # (a name: one of macros)
        for n in syn.nodes_of(fn.body, *kinds):
            if n.type == "identifier":
                if syn.text(n) not in macros:
                    continue
            else:
                c = parse_number(syn.text(n))
                if c is None or c.kind != "double":
                    continue
            root = _constant_root(n)
            parent = root.parent
            if parent is None:
                continue
            op = syn.text(parent.child_by_field_name("operator"))
            if parent.type == "binary_expression" and op in ARITH:
                other = parent.child_by_field_name("right" if parent.child_by_field_name("left") == root else "left")
                if not has_non_constant(other):
                    continue
            elif parent.type == "assignment_expression" and op in {"+=", "-=", "*=", "/="}:
                if parent.child_by_field_name("right") != root:
                    continue
            else:
                continue
            key = (root.start_byte, root.end_byte)
            if key in seen:
                continue
            seen.add(key)
            lit = syn.text(root)
            shown = f"`{lit}` (`#define {lit} {macros[lit]}`)" if n.type == "identifier" else f"`{lit}`"
            yield ctx.finding(
                syn.line(n),
                f"{shown} is a double constant in float arithmetic (`{syn.text(parent)}`): the operation is"
                " promoted to double precision",
                "add the `f` suffix to the constant (e.g. `0.5f`), or use `-Werror` with a double-promotion warning",
                kernel=fn.name,
                facts=(("literal", lit),),
            )
