"""The tuner's expressions: restrictions, grid, block, shared memory and template arguments.

``--restrict 'BM*BK <= 4096'``, ``--grid 'cdiv(N, BN), cdiv(M, BM)'``, ``--block '(BM/TM)*(BN/TN)'``
are parsed by the one safe grammar of :mod:`cudalens.expressions`, with the space's parameter and
constant names as variables:

* integer and float literals, ``True``/``False``; names of the space's parameters and constants;
* ``+ - * / // % **`` (``**`` with an exponent of at most 64), unary ``+ - not``;
* comparisons (chains too), ``and``, ``or``, ``x if c else y``;
* the calls ``min(...)``, ``max(...)``, ``cdiv(a, b)`` (ceiling division), ``log2(x)``, ``abs(x)``.

``/`` divides exactly: ``(BM/TM)`` is an int when TM divides BM and a float otherwise (a grid or
block that is not a whole number is an error of that configuration).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from cudalens.expressions import Expr, Function, Grammar, cdiv

__all__ = ["Expr", "PARAMETERS", "parse"]


def _cdiv(a: Any, b: Any) -> Any:
    return cdiv(Fraction(a), Fraction(b))


def _log2(x: Any) -> float:
    return math.log2(float(x))


PARAMETERS = Grammar(
    functions={"min": Function(min, None), "max": Function(max, None),
               "cdiv": Function(_cdiv, 2),
               "log2": Function(_log2), "abs": Function(abs)},
    logic=True, exact=True, max_length=400, max_nodes=200, max_exponent=64,
    summary="numbers, parameter names, arithmetic, comparisons, and/or/not, min/max/cdiv/log2/abs",
)


def parse(text: str, allowed: frozenset[str] | set[str] | None = None, *, what: str = "expression") -> Expr:
    """Parse ``text`` over the names in ``allowed``; InputError for anything outside the grammar."""
    return PARAMETERS.parse(text, allowed, what=what)
