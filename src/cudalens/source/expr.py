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

import math
import numbers
from typing import Any, Callable, Mapping

Expr = tuple

#: the built-in coordinates a kernel can read
BUILTINS = frozenset(
    f"{b}.{c}" for b in ("threadIdx", "blockIdx", "blockDim", "gridDim") for c in "xyz"
) | {"warpSize"}

#: calls the evaluator understands (all pure functions of integers)
PURE_CALLS = frozenset({"min", "max", "abs", "umin", "umax", "llmin", "llmax", "__mul24", "__umul24"})
#: host helpers that divide rounding up, by the names real code gives them (a grid of ``ceil_div(n, block)``)
CEIL_DIV_CALLS = frozenset({"ceil_div", "CEIL_DIV", "ceilDiv", "ceildiv", "cdiv", "div_up", "DIV_UP", "divUp",
                            "iDivUp", "DivUp", "div_round_up", "DIV_ROUND_UP"})

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
    """The node's source text ('' for None, or for a tree parsed without its bytes)."""
    data = node.text if node is not None else None  # (read once: each read copies the bytes)
    return data.decode("utf-8", "replace") if data is not None else ""


def parse_number(text: str) -> int | float | None:
    """A C number literal as a Python number (suffixes u, l, f dropped), or None.

    None also for what C cannot hold: an integer beyond 64 bits, or a floating literal that
    overflows to infinity (``1e400``). Integers from 2**63 to 2**64-1 (``0xffffffffffffffffull``)
    keep their 64-bit pattern as a signed value, the representation every integer here has.
    """
    t = text.strip().replace("'", "")
    low = t.lower()
    try:
        if low.startswith("0x"):
            return _literal_int(int(low.rstrip("ul"), 16))
        if low.startswith("0b"):
            return _literal_int(int(low.rstrip("ul")[2:], 2))
        is_float = any(ch in low for ch in ".e")
        if is_float or low.endswith("f"):
            v = float(low.rstrip("fl"))
            return v if math.isfinite(v) else None
        core = low.rstrip("ul")
        if len(core) > 1 and core.startswith("0") and core.isdigit():
            return _literal_int(int(core, 8))
        if len(core) > 20:
            return None
        return _literal_int(int(core))
    except ValueError:
        return None


def _literal_int(v: int) -> int | None:
    return wrap(v) if 0 <= v < 1 << 64 else None


def wrap(v: int) -> int:
    """An integer reduced to a 64-bit two's complement value (C's widest integer type)."""
    v &= _MASK64
    return v - (1 << 64) if v >> 63 else v


_MASK64 = (1 << 64) - 1

#: Expressions deeper or larger than this become unknown ("nesting too deep"): every recursive
#: function over expressions (here, in :mod:`cudalens.access.lanes`, in the rules) stays far from
#: Python's recursion limit, and a chain of self-referencing assignments (``x = x + x;`` repeated)
#: cannot grow an expression exponentially.
MAX_DEPTH = 100
MAX_SIZE = 2000


def too_big(e: Expr) -> bool:
    """True when ``e`` is deeper than :data:`MAX_DEPTH` or has more than :data:`MAX_SIZE` nodes
    (iterative, stops at the first excess: at most MAX_SIZE steps even on shared sub-expressions)."""
    if e[0] not in _COMPOUND:
        return False  # one node
    stack = [(e, 1)]  # the compound nodes to look into, with their depth
    size = 1
    while stack:
        x, d = stack.pop()
        if d > MAX_DEPTH:
            return True
        tag = x[0]
        d += 1
        for kid in (x[2], x[3]) if tag == "b" else (x[2],) if tag == "u" else x[1:] if tag == "t" else x[2]:
            size += 1  # (a leaf is counted here, a compound node too, when pushed)
            if size > MAX_SIZE:
                return True
            if kid[0] in _COMPOUND:
                stack.append((kid, d))
            elif d > MAX_DEPTH:
                return True
    return False


_COMPOUND = frozenset(("b", "u", "t", "f"))  # the tags of expressions with operands (too_big)


def bounded(e: Expr) -> Expr:
    """``e``, or an unknown when it is too deep or too large to model (see :func:`too_big`)."""
    return unknown("nesting too deep") if e[0] in ("b", "u", "t", "f") and too_big(e) else e


Resolver = Callable[[str], Expr]


def from_node(node: Any, resolve: Resolver, on_subscript: Callable[[Any], Expr] | None = None,
              on_call: Callable[[Any], Expr] | None = None, _depth: int = 0) -> Expr:
    """Build an expression from a tree-sitter expression node.

    ``resolve(name)`` maps an identifier to an expression (a local variable's current definition,
    a symbol for a parameter or macro, or an unknown). ``on_subscript`` and ``on_call`` let the
    caller decide what a load or a call means (default: unknown). Syntax nested deeper than
    :data:`MAX_DEPTH`, and results larger than :data:`MAX_SIZE`, are unknown ("nesting too deep").
    """
    if node is None:
        return unknown("missing")
    if _depth > MAX_DEPTH:
        return unknown("nesting too deep")
    t = node.type
    if t == "identifier":  # (the most common node here, then literals: answered before sub is made)
        return bounded(resolve(node_text(node)))
    if t == "number_literal":
        v = parse_number(node_text(node))
        return num(v) if v is not None else unknown("number")
    if t in ("true", "false"):
        return num(1 if t == "true" else 0)
    if t == "char_literal":
        txt = node_text(node)
        return num(ord(txt[1])) if len(txt) == 3 else unknown("char")
    if t == "field_expression":
        base = node.child_by_field_name("argument")
        field = node.child_by_field_name("field")
        name = f"{node_text(base)}.{node_text(field)}"
        if name in BUILTINS:
            return ("v", name)
        return bounded(resolve(name))

    def sub(n: Any) -> Expr:
        return from_node(n, resolve, on_subscript, on_call, _depth + 1)

    if t == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        return sub(inner[-1]) if inner else unknown("empty")
    if t == "binary_expression":
        op = node_text(node.child_by_field_name("operator"))
        if op not in _BINARY:
            return unknown(f"operator {op}")
        left = sub(node.child_by_field_name("left"))
        right = sub(node.child_by_field_name("right"))
        return fold(("b", op, left, right))
    if t == "unary_expression":
        op = node_text(node.child_by_field_name("operator"))
        arg = sub(node.child_by_field_name("argument"))
        if op == "+":
            return arg
        if op in ("-", "!", "~"):
            return fold(("u", op, arg))
        return unknown(f"unary {op}")
    if t == "conditional_expression":
        c = sub(node.child_by_field_name("condition"))
        a = sub(node.child_by_field_name("consequence"))
        b = sub(node.child_by_field_name("alternative"))
        return bounded(("t", c, a, b))
    if t == "cast_expression":
        return sub(node.child_by_field_name("value"))
    if t == "comma_expression":
        return sub(node.child_by_field_name("right"))
    if t == "subscript_expression":
        return bounded(on_subscript(node)) if on_subscript else unknown("load")
    if t == "call_expression":
        if on_call is not None:
            return bounded(on_call(node))
        return unknown("call")
    if t == "qualified_identifier":  # Packed128<floatX>::size: a static member the resolver may know
        return bounded(resolve("".join(node_text(node).split())))
    if t == "sizeof_expression":  # sizeof(float): the size of a type the front end knows
        from cudalens.source.types import element_bytes

        ty = node.child_by_field_name("type") or node.child_by_field_name("value")
        name = node_text(ty).strip()
        while name.startswith("(") and name.endswith(")"):
            name = name[1:-1].strip()
        size = element_bytes(name) if name else None
        if size is None and name.replace("_", "a").isalnum():  # a typedef the resolver may know (floatX)
            got = resolve(f"sizeof({name})")
            size = got[1] if got[0] == "n" else None
        return ("n", size) if size is not None else unknown("sizeof")
    return unknown(t)


def fold(e: Expr) -> Expr:
    """Fold constant sub-expressions (keeps expressions small), in C's arithmetic.

    An operation C leaves undefined or that has no finite value (division by zero, a shift by a
    negative count or by 64 or more, a bit operation on a floating value, an infinite or NaN
    result) is left unfolded; evaluating it later raises :class:`Unknown`. The result is bounded
    (:func:`bounded`).
    """
    tag = e[0]
    if tag == "b" and e[2][0] == "n" and e[3][0] == "n":
        try:
            return num(apply_binary(e[1], e[2][1], e[3][1]))
        except Unknown:
            return e
    if tag == "u" and e[2][0] == "n":
        try:
            return num(apply_unary(e[1], e[2][1]))
        except Unknown:
            return e
    return bounded(e)


def _is_float(v: Any) -> bool:
    return isinstance(v, float)


def _finite(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        raise Unknown("not a finite number")
    return v


def _cdiv(a: Any, b: Any) -> Any:
    if b == 0:
        raise Unknown("division by zero")
    if _is_float(a) or _is_float(b):
        return float(a) / float(b)
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def apply_unary(op: str, v: Any) -> Any:
    """``-``, ``!``, ``~`` on one value, in C's arithmetic (64-bit integers wrap)."""
    if op == "-":
        return -v if _is_float(v) else wrap(-v)
    if op == "!":
        return int(not v)
    if op == "~" and not _is_float(v):
        return wrap(~v)
    raise Unknown(f"unary {op}")


def apply_binary(op: str, a: Any, b: Any) -> Any:
    """One binary operation on Python scalars with C semantics; raises :class:`Unknown` where C has
    no defined finite value.

    Integers are 64-bit two's complement and wrap; an operand that is floating makes the operation
    floating (the integer is converted first, as C does); ``/`` and ``%`` on integers truncate
    toward zero; shifts, ``%`` and bit operations need integers, and a shift count between 0 and 63.
    """
    if isinstance(a, bool):
        a = int(a)
    if isinstance(b, bool):
        b = int(b)
    fl = _is_float(a) or _is_float(b)
    if op in ("<<", ">>", "&", "|", "^", "%") and fl:
        raise Unknown(f"operator {op} on a floating value")
    if fl:
        a, b = float(a), float(b)
    if op == "+":
        return _finite(a + b) if fl else wrap(a + b)
    if op == "-":
        return _finite(a - b) if fl else wrap(a - b)
    if op == "*":
        return _finite(a * b) if fl else wrap(a * b)
    if op == "/":
        q = _cdiv(a, b)
        return _finite(q) if fl else wrap(q)
    if op == "%":
        return wrap(a - _cdiv(a, b) * b)
    if op in ("<<", ">>"):
        if not 0 <= b < 64:
            raise Unknown(f"shift by {b}")
        return wrap(a << b) if op == "<<" else a >> b
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
    raise Unknown(f"operator {op}")


def eval_scalar(e: Expr, values: Mapping[str, Any], _depth: int = 0) -> Any:
    """Evaluate to a Python number; raises :class:`Unknown` for anything not determined.

    Symbols take their values from ``values``: numbers, or expressions (a macro's definition),
    followed at most :data:`MAX_DEPTH` levels deep (``#define A B`` with ``#define B A`` is unknown).
    """
    tag = e[0]
    if tag == "n":
        return e[1]
    if tag == "v":
        if e[1] not in values:
            raise Unknown(e[1])
        v = values[e[1]]
        if isinstance(v, tuple):  # a macro given as an expression
            if _depth > MAX_DEPTH:
                raise Unknown("recursive definition")
            return eval_scalar(v, values, _depth + 1)
        return _scalar(v, e[1])
    if tag == "b":
        a = eval_scalar(e[2], values, _depth)
        if e[1] == "&&" and not a:
            return 0
        if e[1] == "||" and a:
            return 1
        b = eval_scalar(e[3], values, _depth)
        return apply_binary(e[1], a, b)
    if tag == "u":
        return apply_unary(e[1], eval_scalar(e[2], values, _depth))
    if tag == "t":
        return eval_scalar(e[2] if eval_scalar(e[1], values, _depth) else e[3], values, _depth)
    if tag == "f":
        args = [eval_scalar(a, values, _depth) for a in e[2]]
        name = e[1]
        if name in ("min", "umin", "llmin") and len(args) == 2:
            return min(args)
        if name in ("max", "umax", "llmax") and len(args) == 2:
            return max(args)
        if name == "abs" and len(args) == 1:
            return apply_unary("-", args[0]) if args[0] < 0 else args[0]
        if name in ("__mul24", "__umul24") and len(args) == 2:
            return apply_binary("*", args[0], args[1])
        if name in CEIL_DIV_CALLS and len(args) == 2 and all(isinstance(a, int) for a in args) and args[1] > 0:
            return -(-args[0] // args[1])
        raise Unknown(f"call {name}")
    raise Unknown(e[1] if len(e) > 1 else "unknown")


def _scalar(v: Any, name: str) -> int | float:
    """A value given for a symbol as a Python int or a finite float (numpy scalars included)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return wrap(v)
    if isinstance(v, numbers.Integral):
        return wrap(int(v))
    if isinstance(v, numbers.Real) and math.isfinite(float(v)):
        return float(v)
    raise Unknown(name)
