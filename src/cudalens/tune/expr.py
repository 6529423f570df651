"""Safe integer expressions over the tuning parameters: restrictions, grid, block, shared memory.

``--restrict 'BM*BK <= 4096'``, ``--grid 'cdiv(N, BN), cdiv(M, BM)'``, ``--block '(BM/TM)*(BN/TN)'``
come from the command line, so they are never handed to ``eval``. Like
:mod:`cudalens.assess.expr` (whose single-variable grammar does not fit names of parameters), the
text is parsed with :mod:`ast` and only a small grammar is accepted:

* integer and float literals, ``True``/``False``; names of the space's parameters and constants;
* ``+ - * / // % **`` (``**`` with an exponent of at most 64), unary ``+ - not``;
* comparisons (chains too), ``and``, ``or``, ``x if c else y``;
* the calls ``min(...)``, ``max(...)``, ``cdiv(a, b)`` (ceiling division), ``log2(x)``, ``abs(x)``.

``/`` divides exactly: ``(BM/TM)`` is an int when TM divides BM and a float otherwise (a grid or
block that is not a whole number is an error of that configuration). Anything else (attributes,
subscripts, other calls, lambdas, strings, comprehensions) is an :class:`~cudalens.errors.InputError`
naming the expression and the part.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from cudalens.errors import InputError

MAX_LENGTH = 400
MAX_NODES = 200
MAX_EXPONENT = 64

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: None,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: None,
}
_CMPS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}


def _cdiv(a: Any, b: Any) -> Any:
    return -((-a) // b)


_FUNCS = {"min": min, "max": max, "cdiv": _cdiv, "log2": math.log2, "abs": abs}
_ARITY = {"cdiv": 2, "log2": 1, "abs": 1}


@dataclass(frozen=True)
class Expr:
    """A validated expression; :meth:`value` evaluates it for one set of names."""

    text: str
    tree: ast.expr
    names: frozenset[str]

    def value(self, env: Mapping[str, Any]) -> Any:
        missing = sorted(self.names - set(env))
        if missing:
            raise InputError(f"expression {self.text!r}: unknown name {missing[0]!r}")
        try:
            v = _eval(self.tree, env)
        except ZeroDivisionError:
            raise InputError(f"expression {self.text!r} divides by zero at {_show(env, self.names)}") from None
        except (OverflowError, ValueError) as exc:
            raise InputError(f"expression {self.text!r} is undefined at {_show(env, self.names)} ({exc})") from None
        if isinstance(v, Fraction):
            v = int(v) if v.denominator == 1 else float(v)
        return v

    def integer(self, env: Mapping[str, Any], what: str) -> int:
        """The value as a whole number; InputError when it is not one."""
        v = self.value(env)
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())):
            raise InputError(f"{what} {self.text!r} is {v!r} at {_show(env, self.names)}, not a whole number")
        return int(v)

    def holds(self, env: Mapping[str, Any]) -> bool:
        return bool(self.value(env))


def _show(env: Mapping[str, Any], names: frozenset[str]) -> str:
    return ", ".join(f"{k}={env[k]}" for k in sorted(names) if k in env) or "(no names)"


def parse(text: str, allowed: frozenset[str] | set[str] | None = None, *, what: str = "expression") -> Expr:
    """Parse ``text``; InputError for syntax outside the grammar or names outside ``allowed``."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{what} is empty")
    if len(text) > MAX_LENGTH:
        raise InputError(f"{what} is longer than {MAX_LENGTH} characters: {text[:40]!r}...")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise InputError(f"{what} {text!r} is not valid syntax ({exc.msg})") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise InputError(f"{what} {text!r} is too complex (more than {MAX_NODES} parts)")
    funcs = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    names: set[str] = set()
    for node in nodes:
        problem = _check(node, funcs)
        if problem:
            raise InputError(f"{what} {text!r}: {problem} is not allowed (numbers, parameter names, arithmetic, "
                             "comparisons, and/or/not, min/max/cdiv/log2/abs)")
        if isinstance(node, ast.Name) and id(node) not in funcs:
            names.add(node.id)
    if allowed is not None:
        unknown = sorted(names - set(allowed))
        if unknown:
            raise InputError(f"{what} {text!r}: unknown name {unknown[0]!r} (known: {', '.join(sorted(allowed))})")
    return Expr(text.strip(), tree, frozenset(names))


def _check(node: ast.AST, funcs: set[int]) -> str | None:
    if isinstance(node, ast.Constant):
        return None if isinstance(node.value, (int, float)) else f"the constant {node.value!r}"
    if isinstance(node, ast.Name):
        if id(node) in funcs:
            return None if node.id in _FUNCS else f"the function {node.id!r}"
        return None if node.id not in _FUNCS else f"the bare function name {node.id!r}"
    if isinstance(node, ast.BinOp):
        return None if type(node.op) in _BINOPS else f"the operator {type(node.op).__name__}"
    if isinstance(node, ast.Compare):
        bad = [type(o).__name__ for o in node.ops if type(o) not in _CMPS]
        return f"the comparison {bad[0]}" if bad else None
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS:
            return "a call of anything but min/max/cdiv/log2/abs"
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) or not node.args:
            return f"the call of {node.func.id} with these arguments"
        n = _ARITY.get(node.func.id)
        if n is not None and len(node.args) != n:
            return f"{node.func.id} with {len(node.args)} arguments (takes {n})"
        return None
    if isinstance(node, (ast.BoolOp, ast.UnaryOp, ast.IfExp, ast.Load, ast.operator, ast.unaryop,
                         ast.cmpop, ast.boolop, ast.And, ast.Or)):
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, (ast.UAdd, ast.USub, ast.Not)):
            return f"the operator {type(node.op).__name__}"
        return None
    return f"{type(node).__name__}"


def _num(v: Any) -> Any:
    return Fraction(v) if isinstance(v, int) and not isinstance(v, bool) else v


def _eval(node: ast.expr, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return _num(node.value)
    if isinstance(node, ast.Name):
        return _num(env[node.id])
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if isinstance(node.op, ast.Div):
            return a / b
        if isinstance(node.op, ast.Pow):
            if abs(b) > MAX_EXPONENT:
                raise OverflowError(f"exponent {b} above {MAX_EXPONENT}")
            r = a ** b
            return r if not isinstance(r, complex) else float("nan")
        return _BINOPS[type(node.op)](a, b)
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else (+v if isinstance(node.op, ast.UAdd) else not v)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, env)
            if not _CMPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_eval(v, env) for v in node.values)
        return any(_eval(v, env) for v in node.values)
    if isinstance(node, ast.IfExp):
        return _eval(node.body, env) if _eval(node.test, env) else _eval(node.orelse, env)
    if isinstance(node, ast.Call):
        args = [_eval(a, env) for a in node.args]
        name = node.func.id  # type: ignore[union-attr]
        if name == "log2":
            return math.log2(float(args[0]))
        if name == "cdiv":
            return _cdiv(Fraction(args[0]), Fraction(args[1]))
        return _FUNCS[name](*args)
    raise InputError(f"unsupported part {type(node).__name__}")  # unreachable after parse()
