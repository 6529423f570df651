"""Evaluate expressions for every thread of a block at once (numpy), with C integer semantics.

A *representative block* of ``block = (X, Y, Z)`` threads is laid out the way the hardware forms
warps: the linear thread id is ``x + X*(y + Y*z)`` and warp ``w`` holds ids ``32w .. 32w+31``.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from cudalens.source import expr as E

WARP = 32


def block_coordinates(block: tuple[int, int, int]) -> dict[str, np.ndarray]:
    """threadIdx.x/y/z for the threads of one block, padded with inactive lanes to whole warps."""
    x, y, z = block
    n = x * y * z
    tid = np.arange(n, dtype=np.int64)
    return {
        "threadIdx.x": tid % x,
        "threadIdx.y": (tid // x) % y,
        "threadIdx.z": tid // (x * y),
    }


def as_warps(values: np.ndarray, nthreads: int, fill: Any) -> np.ndarray:
    """Reshape a per-thread array to (warps, 32), padding the last warp with ``fill``; with rows of
    threads (``(n, nthreads)``), each row's warps one after the other: (n * warps, 32)."""
    nwarps = -(-nthreads // WARP)
    out = np.full((*values.shape[:-1], nwarps * WARP), fill, dtype=values.dtype)
    out[..., :nthreads] = values
    return out.reshape(-1, WARP)


def _cdiv(a: Any, b: Any) -> Any:
    if np.any(np.asarray(b) == 0):
        raise E.Unknown("division by zero")
    if np.asarray(a).dtype.kind == "f" or np.asarray(b).dtype.kind == "f":
        return np.asarray(a) / b
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) >= 0) == (np.asarray(b) >= 0), q, -q)


def evaluate(e: E.Expr, values: Mapping[str, Any]) -> Any:
    """Evaluate ``e`` over numpy arrays (or scalars); raises :class:`~cudalens.source.expr.Unknown`.

    A name bound to an expression (a macro, a loop start) is evaluated once per call and reused: a
    chain of macros each using the next twice stays linear, not exponential. Numpy's floating-point
    warnings are off for the whole evaluation (set once, not per operator)."""
    with np.errstate(all="ignore"):
        return _evaluate(e, values, 0, {})


def _evaluate(e: E.Expr, values: Mapping[str, Any], _depth: int, _memo: dict[str, Any]) -> Any:
    tag = e[0]
    if tag == "n":
        return e[1]
    if tag == "v":
        if e[1] not in values:
            raise E.Unknown(e[1])
        v = values[e[1]]
        if isinstance(v, tuple):  # a macro or loop start given as an expression
            if _depth > 50:
                raise E.Unknown("recursive definition")
            if e[1] not in _memo:
                try:
                    _memo[e[1]] = _evaluate(v, values, _depth + 1, _memo)
                except E.Unknown as exc:
                    _memo[e[1]] = exc
            got = _memo[e[1]]
            if isinstance(got, E.Unknown):
                raise got
            return got
        if isinstance(v, str):
            raise E.Unknown(e[1])
        return v
    if tag == "b":
        op = e[1]
        a = _evaluate(e[2], values, _depth, _memo)
        b = _evaluate(e[3], values, _depth, _memo)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return _cdiv(a, b)
        if op == "%":
            return a - _cdiv(a, b) * b
        if op in ("<<", ">>", "&", "|", "^"):
            if np.asarray(a).dtype.kind == "f" or np.asarray(b).dtype.kind == "f":
                raise E.Unknown("bit operation on a float")
            ai, bi = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
            return {"<<": np.left_shift, ">>": np.right_shift, "&": np.bitwise_and, "|": np.bitwise_or,
                    "^": np.bitwise_xor}[op](ai, bi)
        if op == "<":
            return np.asarray(a < b, dtype=np.int64)
        if op == ">":
            return np.asarray(a > b, dtype=np.int64)
        if op == "<=":
            return np.asarray(a <= b, dtype=np.int64)
        if op == ">=":
            return np.asarray(a >= b, dtype=np.int64)
        if op == "==":
            return np.asarray(a == b, dtype=np.int64)
        if op == "!=":
            return np.asarray(a != b, dtype=np.int64)
        if op == "&&":
            return np.asarray((np.asarray(a) != 0) & (np.asarray(b) != 0), dtype=np.int64)
        if op == "||":
            return np.asarray((np.asarray(a) != 0) | (np.asarray(b) != 0), dtype=np.int64)
        raise E.Unknown(f"operator {op}")
    if tag == "u":
        v = _evaluate(e[2], values, _depth, _memo)
        if e[1] == "-":
            return -v
        if e[1] == "!":
            return np.asarray(np.asarray(v) == 0, dtype=np.int64)
        if e[1] == "~":
            return np.invert(np.asarray(v, dtype=np.int64))
        raise E.Unknown("unary")
    if tag == "t":
        c = _evaluate(e[1], values, _depth, _memo)
        a = _evaluate(e[2], values, _depth, _memo)
        b = _evaluate(e[3], values, _depth, _memo)
        return np.where(np.asarray(c) != 0, a, b)
    if tag == "f":
        args = [_evaluate(a, values, _depth, _memo) for a in e[2]]
        name = e[1]
        if name in ("min", "umin", "llmin") and len(args) == 2:
            return np.minimum(args[0], args[1])
        if name in ("max", "umax", "llmax") and len(args) == 2:
            return np.maximum(args[0], args[1])
        if name == "abs" and len(args) == 1:
            return np.abs(args[0])
        if name in ("__mul24", "__umul24") and len(args) == 2:
            return args[0] * args[1]
        raise E.Unknown(f"call {name}")
    raise E.Unknown(e[1] if len(e) > 1 else "unknown")


def per_thread(value: Any, nthreads: int) -> np.ndarray:
    """Broadcast a scalar or array result to one int64 value per thread."""
    return np.broadcast_to(as_int64(value), (nthreads,)).copy()


def as_int64(value: Any) -> np.ndarray:
    """A scalar or array result as int64, where every value is a whole number within 64 bits; raises
    :class:`~cudalens.source.expr.Unknown` otherwise."""
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.floor(arr)):
            raise E.Unknown("non-integer index")
        if not np.all(np.abs(arr) < 2.0**63):
            raise E.Unknown("index beyond 64 bits")
    return arr.astype(np.int64)
