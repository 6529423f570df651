"""Safe arithmetic expressions in one variable ``n`` ("n**3", "3*n**2", "n*log2(n)").

The offload model takes the work and the transferred elements of an operation as formulas of
the problem size. They come from the command line, so they are never handed to ``eval``.
Instead the text is parsed with :mod:`ast` and only a small grammar is accepted:

* numbers (int or float literals), the name ``n``;
* the binary operators ``+ - * / **`` and unary ``+ -``; parentheses;
* the calls ``log2(x)``, ``log(x)`` (natural), ``sqrt(x)`` with exactly one argument.

Anything else (attribute access, other names, subscripts, other calls, comparisons, lambdas,
strings) is rejected with an :class:`~cudalens.errors.InputError` that names the expression and
the offending part. Evaluation uses floats only, so it cannot allocate huge integers; a value
that overflows (``2**n**n**n``) or is undefined (``log2(0)``, ``1/0``) is also an InputError.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

from cudalens.errors import InputError

MAX_LENGTH = 200  # characters; formulas of the guide are a dozen characters long
MAX_NODES = 100  # AST nodes after parsing

_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
_UNARY = {ast.UAdd: lambda a: a, ast.USub: lambda a: -a}
_FUNCS = {"log2": math.log2, "log": math.log, "sqrt": math.sqrt}


@dataclass(frozen=True)
class Expression:
    """A validated formula in ``n``; call :meth:`evaluate` (or the object) to get a float."""

    text: str
    tree: ast.expr

    def evaluate(self, n: float) -> float:
        """Value at ``n`` as a float; InputError if it overflows or is undefined there."""
        try:
            value = _eval(self.tree, float(n))
        except OverflowError:
            raise InputError(f"expression {self.text!r} overflows at n = {n:g}") from None
        except ZeroDivisionError:
            raise InputError(f"expression {self.text!r} divides by zero at n = {n:g}") from None
        except ValueError:  # math domain error, e.g. log2(0), sqrt(-1)
            raise InputError(f"expression {self.text!r} is undefined at n = {n:g}") from None
        if isinstance(value, complex) or math.isnan(value) or math.isinf(value):
            raise InputError(f"expression {self.text!r} is not a finite real number at n = {n:g}")
        return value

    __call__ = evaluate


def parse(text: str) -> Expression:
    """Parse ``text`` into an :class:`Expression`, or raise InputError saying what is not allowed."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("expression is empty; write a formula in n such as 'n**3'")
    if len(text) > MAX_LENGTH:
        raise InputError(f"expression is longer than {MAX_LENGTH} characters: {text[:40]!r}...")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise InputError(f"expression {text!r} is not valid syntax ({exc.msg})") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise InputError(f"expression {text!r} is too complex (more than {MAX_NODES} parts)")
    called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    for node in nodes:
        if isinstance(node, ast.Name) and node.id in _FUNCS and id(node) not in called:
            raise InputError(f"expression {text!r}: the function {node.id!r} must be called, e.g. {node.id}(n)")
        problem = _check(node)
        if problem is not None:
            raise InputError(
                f"expression {text!r}: {problem} is not allowed "
                "(only numbers, n, + - * / **, parentheses, log2/log/sqrt)"
            )
    return Expression(text.strip(), tree)


def _check(node: ast.AST) -> str | None:
    """None if ``node`` belongs to the grammar, else a short description of it."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            return f"the constant {_src(node)}"
        return None
    if isinstance(node, ast.Name):
        if node.id == "n" or node.id in _FUNCS:
            return None
        return f"the name {node.id!r}"
    if isinstance(node, ast.BinOp):
        return None if type(node.op) in _BINOPS else f"the operator in {_src(node)}"
    if isinstance(node, ast.UnaryOp):
        return None if type(node.op) in _UNARY else f"the operator in {_src(node)}"
    if isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS):
            return f"the call {_src(node)}"
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            return f"the call {_src(node)} (takes exactly one argument)"
        return None
    if isinstance(node, (ast.Load, ast.operator, ast.unaryop)):
        return None
    return f"{_src(node)} ({type(node).__name__})"


def _src(node: ast.AST) -> str:
    try:
        return repr(ast.unparse(node))
    except Exception:  # noqa: BLE001 - best effort for the message only
        return type(node).__name__


def _eval(node: ast.expr, n: float) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return n  # parse() admits no other bare name
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, n), _eval(node.right, n))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, n))
    if isinstance(node, ast.Call):
        return _FUNCS[node.func.id](_eval(node.args[0], n))  # type: ignore[union-attr]
    raise InputError(f"unsupported part {_src(node)}")  # unreachable after parse()
