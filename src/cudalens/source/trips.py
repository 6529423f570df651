"""How many times a loop runs, from what the source states (literal bounds, ``#define``d constants)
and from what the launch passes.

Pure functions of the front end's :class:`~cudalens.source.model.Loop`: used by the impact
estimate (findings weighted by how often their line runs) and by rules that judge loops.

:func:`trip_count` reads the source alone. :func:`loop_trips` is what ranking and messages use: a
:class:`Trips` that says where its count came from, never a silent constant (issue #30):

1. the source's own count (literal bounds, macros; a grid-stride loop runs once);
2. the launch's values for the kernel's scalar parameters (``n = 100000`` passed from ``main``),
   and its block width for a block-stride loop (``i += blockDim.x``: ``n / blockDim.x`` trips);
3. the compiled run's count (``Loop.compiled_trips``);
4. an *input range*: a parameter the program computes from its input (the launch layer's
   ``ValueRange``, e.g. ``argv[1]`` with its default), the count at both ends, with its condition;
5. a *trial range*: a scalar parameter no launch gives, tried at :data:`TRIAL_VALUES`
   (the compiled model's own trial sizes); a bound the kernel computes (``row_ptr[i + 1]``) at
   :data:`DATA_TRIPS`.

A range ranks at its **geometric middle** (``sqrt(lo x hi)``): a count that may be anywhere in
``256..4096`` weighs 1024, an order of magnitude from either end at most, and the finding's text
gives the range and its condition.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import re
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Mapping

#: Values a scalar parameter no launch gives is tried at (low, high): the compiled model's trial
#: sizes (access.ptx_eval.PLAUSIBLE).
TRIAL_VALUES = (256, 4096)
#: Trips tried for a loop whose bound the kernel computes (loaded, or a local the source model cannot
#: follow): (low, high), ranked at their geometric middle, 16.
DATA_TRIPS = (1, 256)

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


def trip_count(loop: Any, defines: Mapping[str, str] | None = None) -> tuple[float | None, str]:
    """(trips, how it was established): "literal", "grid-stride", or (None, "unknown") where the
    source alone does not give the count (:func:`loop_trips` goes further)."""
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
    return None, "unknown"


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


@dataclass(frozen=True)
class Trips:
    """A loop's trips per entry: ``value`` is what ranking uses; ``lo``..``hi`` where it is a range
    (ranked at its geometric middle), with the ``condition`` it holds under."""

    value: float
    basis: str  # literal | grid-stride | launch | compiled code | input range | trial range
    lo: float | None = None
    hi: float | None = None
    condition: str = ""

    def describe(self) -> str:
        """``100000 trips (launch: n = 100000)``, ``256..4096 trips (trial range: ...; ranked at 1024)``."""
        if self.lo is None or self.hi is None:
            how = f"{self.basis}: {self.condition}" if self.condition else self.basis
            return f"{self.value:g} trips ({how})"
        span = f"{self.lo:g} trips" if self.lo == self.hi else f"{self.lo:g}..{self.hi:g} trips"
        middle = "" if self.lo == self.hi else f"; ranked at {self.value:g}, the range's geometric middle"
        return f"{span} ({self.basis}: {self.condition}{middle})"

    def to_dict(self) -> dict[str, Any]:
        return {"trips": self.value, "basis": self.basis, "lo": self.lo, "hi": self.hi, "condition": self.condition}


def launch_params(kernel: Any, model: Any = None) -> dict[str, Any]:
    """The scalar parameter values kernel ``kernel``'s launch passes: numbers, and input ranges
    (objects with ``lo``, ``hi``, ``condition``). The one place they are read for trip counts: the
    project's launch layer (``Kernel.launch``, a :class:`~cudalens.project.launches.ResolvedLaunch`)
    where it resolved one, else ``model``'s launch sites in the file, a value counting where every
    site passes the same whole number (``layernorm<<<g, b>>>(x, y, 4096, 768)``)."""
    launch = getattr(kernel, "launch", None)
    if launch is not None and getattr(launch, "origin", "assumed") != "assumed":
        return {name: v for name, v in launch.params if not isinstance(v, bool)}
    sites = [s for s in getattr(model, "launch_sites", ()) if s.kernel == kernel.name and s.arg_values]
    values: dict[str, Any] = {}
    for i, p in enumerate(getattr(kernel, "params", ())):
        seen = {s.arg_values[i] for s in sites if i < len(s.arg_values)}
        if not p.is_pointer and len(seen) == 1 and None not in seen:
            v = seen.pop()
            if _is_number(v):
                values[p.name] = int(v)
    return values


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()


def _names(loop: Any) -> set[str]:
    return set(_NAME.findall(" ".join(t or "" for t in (loop.start, loop.condition, loop.step))))


def _with(defines: Mapping[str, str], values: Mapping[str, Any]) -> dict[str, str]:
    return {**{n: str(int(v)) for n, v in values.items()}, **defines}


def _geo(lo: float, hi: float) -> float:
    return float(round(math.sqrt(max(lo, 1.0) * max(hi, 1.0)))) if lo != hi else lo


def _block_stride(loop: Any, block_x: int | None) -> Any:
    """A block-stride loop (``for (i = tid; i < n; i += blockDim.x)``) as one thread counts it: the
    step is the block's width, the start the thread's offset below it (taken as 0: one trip at most
    off); None for any other loop, or where the block is not known."""
    step = loop.step or ""
    if block_x is None or not re.search(r"\bblockDim\.x\b", step) or "gridDim" in step:
        return None
    start = re.sub(r"\bthreadIdx\.x\b", "0", loop.start or "")
    if _value(_start_value(start), {}) is None:
        start = "0"
    return SimpleNamespace(start=start, step=re.sub(r"\bblockDim\.x\b", str(block_x), step),
                           condition=re.sub(r"\bblockDim\.x\b", str(block_x), loop.condition or ""),
                           compiled_trips=getattr(loop, "compiled_trips", None))


def loop_trips(loop: Any, defines: Mapping[str, str] | None = None, params: Mapping[str, Any] | None = None,
               scalars: set[str] | frozenset[str] = frozenset(), block_x: int | None = None) -> Trips:
    """The loop's :class:`Trips` (see the module's docstring for the order): ``params`` the launch's
    values by parameter name (numbers or input ranges, :func:`launch_params`), ``scalars`` the
    kernel's scalar parameter names (those a trial range may stand for), ``block_x`` the launch's
    block width (a block-stride loop runs ``n / blockDim.x`` trips per thread)."""
    strided = _block_stride(loop, block_x) if trip_count(loop, defines)[0] is None else None
    if strided is None:
        return _loop_trips(loop, defines, params, scalars)
    t = _loop_trips(strided, defines, params, scalars)
    width = f"blockDim.x = {block_x}"
    return dataclasses.replace(t, condition=f"{width}; {t.condition}" if t.condition else width)


def _loop_trips(loop: Any, defines: Mapping[str, str] | None, params: Mapping[str, Any] | None,
                scalars: set[str] | frozenset[str]) -> Trips:
    defines = dict(defines or {})
    trips, basis = trip_count(loop, defines)
    if trips is not None:
        return Trips(trips, basis)
    used = _names(loop) - set(defines)
    given = {n: v for n, v in (params or {}).items() if n in used}
    numbers = {n: v for n, v in given.items() if _is_number(v)}
    if numbers:
        trips, basis = trip_count(loop, _with(defines, numbers))
        if trips is not None:
            return Trips(trips, "launch", condition=", ".join(f"{n} = {int(v)}" for n, v in sorted(numbers.items())))
    if getattr(loop, "compiled_trips", None):
        return Trips(float(loop.compiled_trips), "compiled code")
    ranges = {n: v for n, v in given.items() if n not in numbers and hasattr(v, "lo") and hasattr(v, "hi")}
    trial = sorted((used & set(scalars)) - set(given))
    ends = []
    for i in (0, 1):
        values = {**numbers, **{n: (v.lo, v.hi)[i] for n, v in ranges.items()}, **{n: TRIAL_VALUES[i] for n in trial}}
        if all(_is_number(v) for v in values.values()):
            ends.append(trip_count(loop, _with(defines, values))[0])
    if (ranges or trial) and len(ends) == 2 and None not in ends:
        lo, hi = sorted(float(e) for e in ends if e is not None)
        parts = [f"{n} {v.condition}" if str(v.condition).startswith("from") else f"{n}: {v.condition}"
                 for n, v in sorted(ranges.items())]
        if trial:
            parts.append(f"{', '.join(trial)} not known from any launch, tried at {TRIAL_VALUES[0]}..{TRIAL_VALUES[1]}")
        return Trips(_geo(lo, hi), "trial range" if trial else "input range", lo, hi, "; ".join(parts))
    lo, hi = (float(x) for x in DATA_TRIPS)
    return Trips(_geo(lo, hi), "trial range", lo, hi,
                 f"the model does not count `{loop.condition}` (a bound or step it does not follow), "
                 f"tried at {DATA_TRIPS[0]}..{DATA_TRIPS[1]}")


def trips_of_kernel(kernel: Any, model: Any = None) -> Any:
    """``loop -> Trips`` for the loops of ``kernel``: ``model``'s defines and the launch's values of
    the kernel's scalar parameters (:func:`launch_params`). Each loop's is worked out once."""
    params = launch_params(kernel, model)
    scalars = {p.name for p in getattr(kernel, "params", ()) if not p.is_pointer}
    defines = getattr(model, "defines", None) or {}
    launch = getattr(kernel, "launch", None)
    block = getattr(launch, "block", None) if getattr(launch, "origin", "assumed") != "assumed" else None
    block_x = block[0] if isinstance(block, tuple) else None
    worked: dict[int, tuple[Any, Trips]] = {}  # each loop's, once: every finding on a line in it asks again

    def trips_of(lp: Any) -> Trips:
        got = worked.get(id(lp))
        if got is None or got[0] is not lp:
            got = worked[id(lp)] = (lp, loop_trips(lp, defines, params, scalars, block_x))
        return got[1]

    return trips_of
