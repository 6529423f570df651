"""How many times a loop runs, from what the source states (literal bounds, ``#define``d constants).

Pure functions of the front end's :class:`~cudalens.source.model.Loop`: used by the impact
estimate (findings weighted by how often their line runs) and by rules that judge loops.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Mapping

#: Trips assumed for a loop whose count the source does not state.
UNKNOWN_TRIPS = 16.0

_INT = re.compile(r"^\(?\s*(-?\d+)[uUlL]*\s*\)?$")
_COND = re.compile(r"^\s*(\w+)\s*(<=|<|>=|>|!=)\s*(.+?)\s*$")
_STEP_ADD = re.compile(r"^\s*(?:\+\+\s*(\w+)|(\w+)\s*\+\+|(\w+)\s*\+=\s*(.+)|(\w+)\s*=\s*\2?\s*(\w+)\s*\+\s*(.+))\s*$")
_STEP_SUB = re.compile(r"^\s*(?:--\s*(\w+)|(\w+)\s*--|(\w+)\s*-=\s*(.+))\s*$")
_STEP_MUL = re.compile(r"^\s*(\w+)\s*(?:\*=\s*2|<<=\s*1)\s*$")
_STEP_DIV = re.compile(r"^\s*(\w+)\s*(?:/=\s*2|>>=\s*1)\s*$")


def _value(text: str | None, defines: Mapping[str, str]) -> int | None:
    """The integer an expression of literals and ``#define``s stands for (``(BINS / 4)``), or None."""
    if text is None:
        return None
    t = text.strip()
    m = _INT.match(t)
    if m:
        return int(m.group(1))
    for _ in range(4):  # follow #define chains a few steps
        t = _SUFFIX.sub(r"\1", t)  # 256U: the suffix is not a name to substitute
        names = set(_NAME.findall(t))
        if not names:
            break
        if not names <= set(defines):
            return None
        t = _NAME.sub(lambda m: f"({defines[m.group(0)]})", t)
    t = _SUFFIX.sub(r"\1", t)
    if _NAME.search(t) or not _ARITH.fullmatch(t):
        return None
    try:
        value = _eval(ast.parse(t, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError, OverflowError):
        return None
    return value if isinstance(value, int) and abs(value) < 2**63 else None


_NAME = re.compile(r"[A-Za-z_]\w*")
_SUFFIX = re.compile(r"\b(\d+)[uUlL]+\b")
_ARITH = re.compile(r"[\d\s()+\-*/%<>]+")
_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
        ast.LShift: lambda a, b: a << min(b, 63), ast.RShift: lambda a, b: a >> b}


def _eval(node: ast.AST) -> int:
    """Integer arithmetic of a parsed expression (C's ``/`` on the non-negative integers of loop
    bounds is Python's ``//``); anything else raises ValueError."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand)
    if isinstance(node, ast.BinOp):
        op = ast.FloorDiv if isinstance(node.op, ast.Div) else type(node.op)
        if op in _OPS:
            return _OPS[op](_eval(node.left), _eval(node.right))
    raise ValueError("not integer arithmetic")


def trip_count(loop: Any, defines: Mapping[str, str] | None = None) -> tuple[float, str]:
    """(trips, how it was established): "literal", "grid-stride", or "assumed"."""
    defines = defines or {}
    step = (loop.step or "").replace(" ", "")
    if "gridDim" in step:
        return 1.0, "grid-stride"
    cond = _COND.match(loop.condition or "")
    start = _value(_start_value(loop.start), defines)
    if cond and start is not None:
        bound = _value(cond.group(3), defines)
        op = cond.group(2)
        if bound is not None:
            amount = _value(loop.step, defines)  # the model gives an additive step as its amount
            if (amount or _STEP_ADD.match(loop.step or "")) and op in ("<", "<=", "!="):
                inc = amount or _increment(loop.step or "", defines)
                if inc:
                    span = bound - start + (1 if op == "<=" else 0)
                    return float(max(0, -(-span // inc))), "literal"
            if amount is not None and amount < 0 and op in (">", ">="):
                return float(max(0, -(-(start - bound + (1 if op == ">=" else 0)) // -amount))), "literal"
            if _STEP_SUB.match(loop.step or "") and op in (">", ">="):
                span = start - bound + (1 if op == ">=" else 0)
                return float(max(0, span)), "literal"
            if _STEP_DIV.match(loop.step or "") and op in (">", ">=", "!=") and start > 0:
                return float(max(1, start.bit_length() - max(bound, 0).bit_length() + (1 if op == ">=" else 0))), "literal"
            if _STEP_MUL.match(loop.step or "") and op in ("<", "<=") and start > 0:
                return float(max(1, (bound // start).bit_length())), "literal"
    return UNKNOWN_TRIPS, "assumed"


def _start_value(start: str | None) -> str | None:
    if start is None:
        return None
    return start.split("=")[-1].strip() if "=" in start else start.strip()


def _increment(step: str, defines: Mapping[str, str]) -> int | None:
    m = _STEP_ADD.match(step)
    if not m:
        return None
    if m.group(1) or m.group(2):
        return 1
    amount = m.group(4) or m.group(7)
    return _value(amount, defines)
