"""A small expression language for index and condition expressions.

Tree-sitter gives us syntax; the access model needs *values*: an index such as
``blockIdx.x * blockDim.x + threadIdx.x + s`` evaluated for the 32 lanes of a warp. Instead of a
general computer-algebra system (sympy was measured as too slow for a 2,000-line file and is not a
dependency) we keep expressions as tiny tuples and evaluate them numerically, for every thread of a
block at once, with numpy (see :mod:`cudalens.access.lanes`).

Expression forms (plain tuples, cheap to build and compare):

``("n", value)``            a number (int or float)
``("v", name)``             a symbol: ``threadIdx.x``, a kernel parameter, a macro, a loop variable
``("b", op, left, right)``  a binary operation with C semantics (``/`` and ``%`` truncate)
``("u", op, operand)``      unary ``-``, ``!``, ``~``, ``+``
``("t", cond, a, b)``       ``cond ? a : b``
``("f", name, args)``       a call of a pure helper the evaluator knows (min, max, abs)
``("x", reason)``           unknown: a loaded value, an opaque call, syntax we do not model

Local variable definitions are substituted when an expression is built, so a finished expression
mentions only symbols whose values the evaluator is given (thread/block coordinates, parameters,
macros, loop variables).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

Expr = tuple

#: the built-in coordinates a kernel can read
BUILTINS = frozenset(
    f"{b}.{c}" for b in ("threadIdx", "blockIdx", "blockDim", "gridDim") for c in "xyz"
) | {"warpSize"}

#: calls the evaluator understands (all pure functions of integers)
PURE_CALLS = frozenset({"min", "max", "abs", "umin", "umax", "llmin", "llmax", "__mul24", "__umul24"})

_BINARY = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", ">", "<=", ">=", "==", "!=", "&&", "||"})


class Unknown(Exception):
    """Raised by evaluation when an expression depends on something the model cannot see."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def num(value: int | float) -> Expr:
    return ("n", value)


def unknown(reason: str) -> Expr:
    return ("x", reason)


def symbols(e: Expr) -> set[str]:
    """Every symbol name an expression mentions."""
    out: set[str] = set()
    _collect(e, out, "v")
    return out


def unknowns(e: Expr) -> set[str]:
    """The reasons of every unknown part of an expression (empty when fully known)."""
    out: set[str] = set()
    _collect(e, out, "x")
    return out


def _collect(e: Expr, out: set[str], kind: str) -> None:
    tag = e[0]
    if tag == kind:
        out.add(e[1])
    elif tag == "b":
        _collect(e[2], out, kind)
        _collect(e[3], out, kind)
    elif tag == "u":
        _collect(e[2], out, kind)
    elif tag == "t":
        _collect(e[1], out, kind)
        _collect(e[2], out, kind)
        _collect(e[3], out, kind)
    elif tag == "f":
        for a in e[2]:
            _collect(a, out, kind)


def substitute(e: Expr, values: Mapping[str, Expr]) -> Expr:
    """Replace symbols by expressions (used to inline ``__device__`` helpers)."""
    tag = e[0]
    if tag == "v":
        return values.get(e[1], e)
    if tag == "b":
        return ("b", e[1], substitute(e[2], values), substitute(e[3], values))
    if tag == "u":
        return ("u", e[1], substitute(e[2], values))
    if tag == "t":
        return ("t", substitute(e[1], values), substitute(e[2], values), substitute(e[3], values))
    if tag == "f":
        return ("f", e[1], tuple(substitute(a, values) for a in e[2]))
    return e


def to_text(e: Expr) -> str:
    """A readable C-like rendering (for messages and debugging)."""
    tag = e[0]
    if tag == "n":
        return str(e[1])
    if tag == "v":
        return e[1]
    if tag == "b":
        return f"({to_text(e[2])} {e[1]} {to_text(e[3])})"
    if tag == "u":
        return f"{e[1]}{to_text(e[2])}"
    if tag == "t":
        return f"({to_text(e[1])} ? {to_text(e[2])} : {to_text(e[3])})"
    if tag == "f":
        return f"{e[1]}({', '.join(to_text(a) for a in e[2])})"
    return f"<{e[1]}>"


# --------------------------------------------------------------------------------------------
# Building expressions from tree-sitter nodes


def node_text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def parse_number(text: str) -> int | float | None:
    """A C number literal as a Python number (suffixes u, l, f dropped), or None."""
    t = text.strip().replace("'", "")
    low = t.lower()
    try:
        if low.startswith("0x"):
            return int(low.rstrip("ul"), 16)
        if low.startswith("0b"):
            return int(low.rstrip("ul")[2:], 2)
        is_float = any(ch in low for ch in ".e") and not low.startswith("0x")
        if is_float or low.endswith("f") and not low.startswith("0x"):
            return float(low.rstrip("fl"))
        core = low.rstrip("ul")
        if len(core) > 1 and core.startswith("0") and core.isdigit():
            return int(core, 8)
        return int(core)
    except ValueError:
        return None


Resolver = Callable[[str], Expr]


def from_node(node: Any, resolve: Resolver, on_subscript: Callable[[Any], Expr] | None = None,
              on_call: Callable[[Any], Expr] | None = None) -> Expr:
    """Build an expression from a tree-sitter expression node.

    ``resolve(name)`` maps an identifier to an expression (a local variable's current definition,
    a symbol for a parameter or macro, or an unknown). ``on_subscript`` and ``on_call`` let the
    caller decide what a load or a call means (default: unknown).
    """
    if node is None:
        return unknown("missing")
    t = node.type
    if t == "number_literal":
        v = parse_number(node_text(node))
        return num(v) if v is not None else unknown("number")
    if t in ("true", "false"):
        return num(1 if t == "true" else 0)
    if t == "char_literal":
        txt = node_text(node)
        return num(ord(txt[1])) if len(txt) == 3 else unknown("char")
    if t == "identifier":
        return resolve(node_text(node))
    if t == "field_expression":
        base = node.child_by_field_name("argument")
        field = node.child_by_field_name("field")
        name = f"{node_text(base)}.{node_text(field)}"
        if name in BUILTINS:
            return ("v", name)
        return resolve(name)
    if t == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        return from_node(inner[-1], resolve, on_subscript, on_call) if inner else unknown("empty")
    if t == "binary_expression":
        op = node_text(node.child_by_field_name("operator"))
        if op not in _BINARY:
            return unknown(f"operator {op}")
        left = from_node(node.child_by_field_name("left"), resolve, on_subscript, on_call)
        right = from_node(node.child_by_field_name("right"), resolve, on_subscript, on_call)
        return fold(("b", op, left, right))
    if t == "unary_expression":
        op = node_text(node.child_by_field_name("operator"))
        arg = from_node(node.child_by_field_name("argument"), resolve, on_subscript, on_call)
        if op == "+":
            return arg
        if op in ("-", "!", "~"):
            return fold(("u", op, arg))
        return unknown(f"unary {op}")
    if t == "conditional_expression":
        c = from_node(node.child_by_field_name("condition"), resolve, on_subscript, on_call)
        a = from_node(node.child_by_field_name("consequence"), resolve, on_subscript, on_call)
        b = from_node(node.child_by_field_name("alternative"), resolve, on_subscript, on_call)
        return ("t", c, a, b)
    if t == "cast_expression":
        return from_node(node.child_by_field_name("value"), resolve, on_subscript, on_call)
    if t == "comma_expression":
        return from_node(node.child_by_field_name("right"), resolve, on_subscript, on_call)
    if t == "subscript_expression":
        return on_subscript(node) if on_subscript else unknown("load")
    if t == "call_expression":
        if on_call is not None:
            return on_call(node)
        return unknown("call")
    if t == "sizeof_expression":
        return unknown("sizeof")
    return unknown(t)


def fold(e: Expr) -> Expr:
    """Fold constant sub-expressions (keeps expressions small)."""
    tag = e[0]
    if tag == "b" and e[2][0] == "n" and e[3][0] == "n":
        try:
            return num(apply_binary(e[1], e[2][1], e[3][1]))
        except (ZeroDivisionError, ValueError, OverflowError):
            return e
    if tag == "u" and e[2][0] == "n":
        v = e[2][1]
        if e[1] == "-":
            return num(-v)
        if e[1] == "!":
            return num(int(not v))
        if e[1] == "~" and isinstance(v, int):
            return num(~v)
    return e


def _cdiv(a: Any, b: Any) -> Any:
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def apply_binary(op: str, a: Any, b: Any) -> Any:
    """One binary operation on Python scalars, with C's truncating division."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            raise ZeroDivisionError
        return _cdiv(a, b)
    if op == "%":
        if b == 0:
            raise ZeroDivisionError
        return a - _cdiv(a, b) * b
    if op == "<<":
        return a << b
    if op == ">>":
        return a >> b
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op == "<":
        return int(a < b)
    if op == ">":
        return int(a > b)
    if op == "<=":
        return int(a <= b)
    if op == ">=":
        return int(a >= b)
    if op == "==":
        return int(a == b)
    if op == "!=":
        return int(a != b)
    if op == "&&":
        return int(bool(a) and bool(b))
    if op == "||":
        return int(bool(a) or bool(b))
    raise ValueError(op)


def eval_scalar(e: Expr, values: Mapping[str, Any]) -> Any:
    """Evaluate to a Python number; raises :class:`Unknown` for anything not determined."""
    tag = e[0]
    if tag == "n":
        return e[1]
    if tag == "v":
        if e[1] in values:
            v = values[e[1]]
            if isinstance(v, tuple):  # a macro given as an expression
                return eval_scalar(v, values)
            return v
        raise Unknown(e[1])
    if tag == "b":
        a = eval_scalar(e[2], values)
        if e[1] == "&&" and not a:
            return 0
        if e[1] == "||" and a:
            return 1
        b = eval_scalar(e[3], values)
        try:
            return apply_binary(e[1], a, b)
        except (ZeroDivisionError, ValueError, OverflowError, TypeError) as exc:
            raise Unknown(f"{type(exc).__name__}") from None
    if tag == "u":
        v = eval_scalar(e[2], values)
        if e[1] == "-":
            return -v
        if e[1] == "!":
            return int(not v)
        if e[1] == "~" and isinstance(v, int):
            return ~v
        raise Unknown("unary")
    if tag == "t":
        return eval_scalar(e[2] if eval_scalar(e[1], values) else e[3], values)
    if tag == "f":
        args = [eval_scalar(a, values) for a in e[2]]
        name = e[1]
        if name in ("min", "umin", "llmin") and len(args) == 2:
            return min(args)
        if name in ("max", "umax", "llmax") and len(args) == 2:
            return max(args)
        if name == "abs" and len(args) == 1:
            return abs(args[0])
        if name in ("__mul24", "__umul24") and len(args) == 2:
            return args[0] * args[1]
        raise Unknown(f"call {name}")
    raise Unknown(e[1] if len(e) > 1 else "unknown")
