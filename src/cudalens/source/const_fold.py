"""Constant folding on the tree-sitter nodes, with C's type classes: number literals
(:func:`parse_number`), ``sizeof`` of the common types, casts, ``+ - * / <<`` (:func:`const_eval`),
and whether an expression reads anything that is not a constant (:func:`has_non_constant`).

The rules use it beside :mod:`cudalens.source.syntax` (whose node helpers it builds on): ``2.0 * x``,
``powf(x, 0.5f)``, ``1.0 / sqrtf(x)`` are read through these. Every helper tolerates ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

from cudalens.source.syntax import Node, strip_parens, text, walk

_SIZEOF = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "short": 2, "unsigned short": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "float": 4, "long": 8, "unsigned long": 8,
    "long long": 8, "unsigned long long": 8, "double": 8, "size_t": 8, "int8_t": 1, "uint8_t": 1,
    "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8,
    "half": 2, "__half": 2, "__nv_bfloat16": 2, "half2": 4, "__half2": 4, "float2": 8, "float4": 16,
    "int2": 8, "int4": 16, "double2": 16,
}


@dataclass(frozen=True)
class Const:
    """A compile-time constant with its C type class: "int", "float" (f suffix) or "double"."""

    value: float | int
    kind: str


def parse_number(s: str) -> Const | None:
    """Parse a C/C++ number literal, keeping whether it is int, float or double.

    None for what C cannot hold (an integer beyond 64 bits, a floating literal that overflows);
    the value itself comes from :func:`cudalens.source.expr.parse_number` (one number reader).
    """
    from cudalens.source.expr import parse_number as number

    low = s.replace("'", "").strip().lower()
    v = number(low)
    if v is None:
        return None
    if isinstance(v, int):
        return Const(v, "int")
    return Const(v, "float" if low.endswith("f") and not low.startswith("0x") else "double")


_RANKS = {"int": 0, "float": 1, "double": 2}


def const_eval(node: Node | None, names: dict[str, Const] | None = None, _depth: int = 0) -> Const | None:
    """Fold a constant expression with C semantics (int division truncates), or None.

    ``names`` maps identifiers (macros such as M_PI) to known constants. Arithmetic is
    :func:`cudalens.source.expr.apply_binary`'s: 64-bit integers wrap, an operation without a
    finite defined value (division by zero, a shift out of range, an overflow to infinity) is None,
    and so is an expression nested deeper than ``cudalens.source.expr.MAX_DEPTH``.
    """
    from cudalens.source import expr as E

    node = strip_parens(node)
    if node is None or _depth > E.MAX_DEPTH:
        return None
    t = node.type
    if t == "number_literal":
        return parse_number(text(node))
    if t == "identifier" and names and text(node) in names:
        return names[text(node)]
    if t == "sizeof_expression":
        inner = node.child_by_field_name("type")
        key = " ".join(text(inner).split()) if inner is not None else ""
        return Const(_SIZEOF[key], "int") if key in _SIZEOF else None
    if t == "unary_expression":
        op = text(node.child_by_field_name("operator"))
        v = const_eval(node.child_by_field_name("argument"), names, _depth + 1)
        if v is None or op not in {"-", "+"}:
            return None
        return Const(E.apply_unary("-", v.value) if op == "-" else v.value, v.kind)
    if t == "cast_expression":
        ty = text(node.child_by_field_name("type")).strip()
        v = const_eval(node.child_by_field_name("value"), names, _depth + 1)
        if v is None:
            return None
        if ty in {"float"}:
            return Const(float(v.value), "float")
        if ty in {"double"}:
            return Const(float(v.value), "double")
        if ty in {"int", "long", "unsigned", "unsigned int", "size_t"}:
            if isinstance(v.value, float) and not abs(v.value) < 2.0**63:
                return None  # out of range (or NaN): undefined in C
            return Const(int(v.value), "int")
        return None
    if t == "binary_expression":
        op = text(node.child_by_field_name("operator"))
        a = const_eval(node.child_by_field_name("left"), names, _depth + 1)
        b = const_eval(node.child_by_field_name("right"), names, _depth + 1)
        if a is None or b is None or op not in {"+", "-", "*", "/", "<<"}:
            return None
        kind = a.kind if _RANKS[a.kind] >= _RANKS[b.kind] else b.kind
        x, y = (float(a.value), float(b.value)) if kind != "int" else (a.value, b.value)
        try:
            return Const(E.apply_binary(op, x, y), kind)
        except E.Unknown:
            return None
    return None


def has_non_constant(node: Node | None) -> bool:
    """True when the expression reads a variable, a call result or memory."""
    for n in walk(node):
        if n.type in {"identifier", "field_expression", "subscript_expression", "call_expression",
                      "pointer_expression"}:
            return True
    return False
