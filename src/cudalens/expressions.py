"""One safe expression grammar for text from the command line, with a variable set per use.

Formulas of the offload model (``--ops 'n*log2(n)'``, one variable ``n``) and the tuner's
restrictions, grid, block and template arguments (``'BM*BK <= 4096'``, ``'cdiv(N, BN)'``, the
space's parameter names) come from the user, so they are never handed to ``eval``. The text is
parsed with :mod:`ast` and checked against a :class:`Grammar`: which names are variables, which
functions may be called (with their arity), whether comparisons, ``and``/``or``/``not``,
``x if c else y``, ``//`` and ``%`` belong to it, and how numbers are evaluated:

* ``exact``: integers are evaluated as fractions, so ``N/BM`` is an int when BM divides N and a
  float otherwise, and ``**`` takes an exponent of at most ``max_exponent``;
* otherwise every value is a float, and a result that overflows, is undefined or is not a finite
  real number is an error.

Anything outside the grammar (attributes, subscripts, other calls, lambdas, strings,
comprehensions, names outside the variable set) is an :class:`~cudalens.errors.InputError` naming
the expression and the part.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from cudalens.errors import InputError

_ARITH: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_INTEGER_OPS: dict[type, Callable[[Any, Any], Any]] = {ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_CMPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}


def cdiv(a: Any, b: Any) -> Any:
    """Ceiling division of two numbers (exact for ints and fractions)."""
    return -((-a) // b)


@dataclass(frozen=True)
class Function:
    """A function the grammar admits: what it computes and how many arguments it takes (None: one or more)."""

    call: Callable[..., Any]
    arity: int | None = 1


@dataclass(frozen=True, eq=False)
class Grammar:
    """What an expression may contain and how it is evaluated.

    ``names``: the variables every expression of this grammar may use (None: the caller says per
    parse). ``logic``: comparisons, ``and``/``or``/``not``, ``x if c else y``, ``True``/``False``,
    ``//`` and ``%``. ``summary``: the grammar in a few words, for error messages; ``example``: a
    sentence appended when the text is empty.
    """

    functions: Mapping[str, Function]
    names: frozenset[str] | None = None
    logic: bool = False
    exact: bool = False
    max_length: int = 200
    max_nodes: int = 100
    max_exponent: int | None = None
    summary: str = ""
    example: str = ""
    _ops: Mapping[type, Callable[[Any, Any], Any]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_ops", {**_ARITH, **(_INTEGER_OPS if self.logic else {})})

    def parse(self, text: str, allowed: frozenset[str] | set[str] | None = None, *,
              what: str = "expression") -> Expr:
        """Parse ``text``; InputError for syntax outside the grammar or names outside the variables.

        ``allowed`` (or the grammar's own ``names``) is the variable set; with neither, any name
        that is not a function is a variable, to be bound when the expression is evaluated.
        """
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{what} is empty{self.example}")
        if len(text) > self.max_length:
            raise InputError(f"{what} is longer than {self.max_length} characters: {text[:40]!r}...")
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as exc:
            raise InputError(f"{what} {text!r} is not valid syntax ({exc.msg})") from None
        nodes = list(ast.walk(tree))
        if len(nodes) > self.max_nodes:
            raise InputError(f"{what} {text!r} is too complex (more than {self.max_nodes} parts)")
        called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
        names: set[str] = set()
        for node in nodes:
            problem = self._check(node, called)
            if problem is not None:
                raise InputError(f"{what} {text!r}: {problem} is not allowed ({self.summary})")
            if isinstance(node, ast.Name) and id(node) not in called:
                names.add(node.id)
        variables = self.names if allowed is None else frozenset(allowed)
        unknown = sorted(names - variables) if variables is not None else []
        if unknown:
            raise InputError(f"{what} {text!r}: unknown name {unknown[0]!r} (known: {', '.join(sorted(variables or ()))})")
        return Expr(text.strip(), tree, frozenset(names), self, what)

    def _check(self, node: ast.AST, called: set[int]) -> str | None:
        """None if ``node`` belongs to the grammar, else a short description of it."""
        if isinstance(node, ast.Constant):
            bad = not isinstance(node.value, (int, float)) or (isinstance(node.value, bool) and not self.logic)
            return f"the constant {_src(node)}" if bad else None
        if isinstance(node, ast.Name):
            if id(node) in called:
                return None if node.id in self.functions else f"the call of {node.id!r}"
            if node.id in self.functions:
                return f"the function {node.id!r} without a call ({node.id}(...))"
            return None
        if isinstance(node, ast.BinOp):
            return None if type(node.op) in self._ops else f"the operator in {_src(node)}"
        if isinstance(node, ast.UnaryOp):
            ok = isinstance(node.op, (ast.UAdd, ast.USub)) or (self.logic and isinstance(node.op, ast.Not))
            return None if ok else f"the operator in {_src(node)}"
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in self.functions):
                return f"the call {_src(node)}"
            arity = self.functions[node.func.id].arity
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) or not node.args:
                return f"the call {_src(node)} with these arguments"
            if arity is not None and len(node.args) != arity:
                return f"the call {_src(node)} (takes {arity} argument{'s' if arity > 1 else ''})"
            return None
        if isinstance(node, ast.Compare):
            known = all(type(o) in _CMPS for o in node.ops)
            return None if self.logic and known else f"the comparison {_src(node)}"
        if isinstance(node, (ast.BoolOp, ast.IfExp)):
            return None if self.logic else f"{_src(node)} ({type(node).__name__})"
        if isinstance(node, (ast.Load, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
            return None  # judged with the node that holds them
        return f"{_src(node)} ({type(node).__name__})"


@dataclass(frozen=True)
class Expr:
    """A validated expression; :meth:`value` evaluates it for one binding of its names."""

    text: str
    tree: ast.expr
    names: frozenset[str]
    grammar: Grammar
    what: str = "expression"

    def value(self, env: Mapping[str, Any]) -> Any:
        """The value for ``env``: an int or float; InputError where it is undefined."""
        missing = sorted(self.names - set(env))
        if missing:
            raise InputError(f"{self.what} {self.text!r}: unknown name {missing[0]!r}")
        where = _show(env, self.names)
        try:
            v = self._eval(self.tree, env)
        except ZeroDivisionError:
            raise InputError(f"{self.what} {self.text!r} divides by zero at {where}") from None
        except OverflowError:
            raise InputError(f"{self.what} {self.text!r} overflows at {where}") from None
        except ValueError:  # math domain error, e.g. log2(0), sqrt(-1)
            raise InputError(f"{self.what} {self.text!r} is undefined at {where}") from None
        if isinstance(v, Fraction):
            return int(v) if v.denominator == 1 else float(v)
        if not self.grammar.exact and (math.isnan(v) or math.isinf(v)):
            raise InputError(f"{self.what} {self.text!r} is not a finite real number at {where}")
        return v

    def integer(self, env: Mapping[str, Any], what: str) -> int:
        """The value as a whole number; InputError when it is not one."""
        v = self.value(env)
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())):
            raise InputError(f"{what} {self.text!r} is {v!r} at {_show(env, self.names)}, not a whole number")
        return int(v)

    def holds(self, env: Mapping[str, Any]) -> bool:
        """The value as a truth (a restriction)."""
        return bool(self.value(env))

    def _num(self, v: Any) -> Any:
        if not self.grammar.exact:
            return float(v)
        return Fraction(v) if isinstance(v, int) and not isinstance(v, bool) else v

    def _eval(self, node: ast.expr, env: Mapping[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return self._num(node.value)
        if isinstance(node, ast.Name):
            return self._num(env[node.id])
        if isinstance(node, ast.BinOp):
            a, b = self._eval(node.left, env), self._eval(node.right, env)
            if isinstance(node.op, ast.Pow):
                limit = self.grammar.max_exponent
                if limit is not None and abs(b) > limit:
                    raise OverflowError(f"exponent {b} above {limit}")
                r = a ** b
                return float("nan") if isinstance(r, complex) else r
            return self.grammar._ops[type(node.op)](a, b)
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, env)
            return -v if isinstance(node.op, ast.USub) else (+v if isinstance(node.op, ast.UAdd) else not v)
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, env)
            for op, right_node in zip(node.ops, node.comparators):
                right = self._eval(right_node, env)
                if not _CMPS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                return all(self._eval(v, env) for v in node.values)
            return any(self._eval(v, env) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self._eval(node.body if self._eval(node.test, env) else node.orelse, env)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.grammar.functions[node.func.id].call(*(self._eval(a, env) for a in node.args))
        raise InputError(f"unsupported part {type(node).__name__}")  # unreachable after parse()


def _show(env: Mapping[str, Any], names: frozenset[str]) -> str:
    return ", ".join(f"{k} = {env[k]:g}" if isinstance(env[k], float) else f"{k} = {env[k]}"
                     for k in sorted(names) if k in env) or "(no names)"


def _src(node: ast.AST) -> str:
    try:
        return repr(ast.unparse(node))
    except Exception:  # noqa: BLE001 - best effort, for the message only
        return type(node).__name__
