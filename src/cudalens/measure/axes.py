"""Axes and sweeps, NVBench style: ``--axis block=128,256,512 --axis T=float,double --axis n=2^20:2^26:x4``.

An axis is a name and a list of values; the sweep is their cartesian product (first axis slowest).
Values are substituted into the benchmark's text by name: ``{T}`` in the kernel name
(``ns::k<{T}, {block}>``), in ``--arg`` specs (``{T}[{n}]:rand``), in ``--grid``/``--block`` (which may be
an expression: ``--grid "{n}/{block}"``), and every axis is also a macro (``-DT=float``).

Value grammar:

- a list: ``128,256,512`` or ``float,double``;
- a range: ``START:STOP:STEP`` with STOP included when reached; STEP ``+k`` (or ``k``) adds, ``xk``
  multiplies; numbers may be written ``2^20``: ``2^20:2^26:x4`` -> 2^20, 2^22, 2^24, 2^26.

Results: :func:`to_csv` and :func:`to_markdown` render one row per cell.
"""

from __future__ import annotations

import ast
import csv
import io
import itertools
import operator
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from cudalens.compiled.names import split_top_level
from cudalens.errors import InputError

MAX_CELLS = 10_000
_NAME = re.compile(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Axis:
    name: str
    values: tuple[str, ...]


def number(text: str, where: str) -> int:
    """``256``, ``2^20`` or ``0x100`` -> int; InputError naming ``where`` (the option and its value)."""
    t = text.strip().replace(" ", "")
    try:
        if "^" in t:
            base, exp = t.split("^", 1)
            return int(base) ** int(exp)
        return int(t, 0)
    except ValueError:
        raise InputError(f"{where}: {text!r} is not an integer (write e.g. 256, 2^20 or 0x100)") from None


def is_range(text: str) -> bool:
    """Whether a value list is written as a range (``START:STOP:STEP``)."""
    return ":" in text and "," not in text and "::" not in text


def parse_range(text: str, where: str) -> tuple[int, ...]:
    """``START:STOP:STEP`` -> its values, STOP included when reached; STEP ``+k`` (or ``k``) adds,
    ``xk`` multiplies: ``2^20:2^26:x4``, ``8:32:x2``, ``0:64:+16``. The one range grammar of every
    command (``bench --axis``, ``tune --space``); InputError naming ``where`` when malformed."""
    parts = text.strip().split(":")
    if len(parts) != 3:
        raise InputError(f"{where}: a range is START:STOP:STEP (e.g. 2^20:2^26:x4 or 0:64:+16)")
    start, stop = number(parts[0], where), number(parts[1], where)
    step = parts[2].strip()
    mult = step[:1] in ("x", "*")
    k = number(step.lstrip("x*+"), where)
    if (mult and (k < 2 or start <= 0)) or (not mult and k <= 0) or stop < start:
        raise InputError(f"{where}: the range never reaches its end (need START <= STOP, "
                         "STEP > 0, and for xK: K >= 2 and START > 0)")
    values: list[int] = []
    v = start
    while v <= stop:
        values.append(v)
        if len(values) > MAX_CELLS:
            raise InputError(f"{where}: more than {MAX_CELLS} values")
        v = v * k if mult else v + k
    return tuple(values)


def parse_axis(spec: str) -> Axis:
    """``name=values`` -> Axis; InputError naming the spec when malformed."""
    name, eq, rest = spec.partition("=")
    name = name.strip()
    if not eq or not _NAME.match(name) or not rest.strip():
        raise InputError(f"--axis {spec!r}: expected NAME=V1,V2,... or NAME=START:STOP:STEP (e.g. n=2^20:2^26:x4)")
    rest = rest.strip()
    if is_range(rest):
        return Axis(name, tuple(str(v) for v in parse_range(rest, f"--axis {spec!r}")))
    values = tuple(v.strip() for v in _split_top(rest))
    if any(not v for v in values):
        raise InputError(f"--axis {spec!r}: empty value in the list")
    return Axis(name, values)


def _split_top(text: str) -> list[str]:
    """Split on commas outside <...> and (...), so ``T=pair<int,int>,float`` has two values."""
    return split_top_level(text)


def parse_axes(specs: Iterable[str]) -> list[Axis]:
    axes = [parse_axis(s) for s in specs]
    names = [a.name for a in axes]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise InputError(f"--axis {sorted(dup)[0]!r} given twice")
    return axes


def grid(axes: Sequence[Axis]) -> list[dict[str, str]]:
    """Every cell of the sweep (cartesian product, first axis varying slowest)."""
    total = 1
    for a in axes:
        total *= len(a.values)
    if total > MAX_CELLS:
        raise InputError(f"the axes give {total} cells; at most {MAX_CELLS}")
    return [dict(zip([a.name for a in axes], combo)) for combo in itertools.product(*(a.values for a in axes))]


_BRACE = re.compile(r"\{([A-Za-z_]\w*)\}")


def substitute(text: str, cell: Mapping[str, Any], what: str = "text", names: str = "an axis (axes") -> str:
    """Replace ``{name}`` with the cell's value; InputError for a name the cell does not define
    (``names``: what defines them, for the message: "an axis (axes", "a --const (constants")."""
    def rep(m: re.Match) -> str:
        if m.group(1) not in cell:
            raise InputError(f"{what} {text!r}: {{{m.group(1)}}} is not {names}: {', '.join(cell) or 'none'})")
        return str(cell[m.group(1)])
    return _BRACE.sub(rep, text)


def unbrace(text: str) -> str:
    """``gemm<{BM}, {BN}>`` -> ``gemm<BM, BN>``: the ``{NAME}`` placeholders as bare names (the
    tuner's expressions name its parameters without braces)."""
    return _BRACE.sub(r"\1", text)


def placeholders(text: str) -> list[str]:
    """The names of the ``{NAME}`` placeholders in ``text``, in order."""
    return _BRACE.findall(text)


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Div: operator.floordiv, ast.Pow: operator.pow, ast.BitXor: operator.pow, ast.Mod: operator.mod}


def int_expr(text: str, what: str) -> int:
    """A small integer expression (``{n}/{block}`` after substitution): + - * / // % ^ (power),
    parentheses; ``/`` rounds up (blocks to cover n), so ``1000/256`` is 4."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise InputError(f"{what} {text!r}: not an integer expression") from None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return int(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Div):
                if b == 0:
                    raise InputError(f"{what} {text!r}: division by zero")
                return -(-a // b)
            return int(_OPS[type(node.op)](a, b))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise InputError(f"{what} {text!r}: only integers and + - * / % ^ are allowed")
    return ev(tree)


def dims_expr(text: str, cell: Mapping[str, str], what: str) -> tuple[int, int, int]:
    """``--grid``/``--block`` with axes: ``"{n}/{block}"`` or ``"{n}/256,4"`` -> 3 positive ints."""
    parts = [p for p in _split_top(substitute(text, cell, f"--{what}")) if p.strip()]
    vals = [int_expr(p, f"--{what}") for p in parts]
    if not 1 <= len(vals) <= 3 or any(v <= 0 for v in vals):
        raise InputError(f"--{what} {text!r}: expected up to three positive integers")
    return tuple(vals + [1] * (3 - len(vals)))  # type: ignore[return-value]


ROW_KEYS = ("median_us", "ci_low_us", "ci_high_us", "rel_stdev_pct", "samples", "bandwidth_gbs", "verdict")


def row(cell: Mapping[str, str], result: Mapping[str, Any] | None, error: str = "") -> dict[str, Any]:
    """One table row of a sweep from a cell and its result dict (BenchResult.to_dict())."""
    out: dict[str, Any] = dict(cell)
    if result is None:
        out.update({k: "" for k in ROW_KEYS})
        out["verdict"] = f"error: {error}"
        return out
    s = result["summary"]
    thr = result.get("throughput") or {}
    cert = result.get("certificate") or {}
    out.update({"median_us": round(s["median"] * 1e6, 4), "ci_low_us": round(s["ci_low"] * 1e6, 4),
                "ci_high_us": round(s["ci_high"] * 1e6, 4), "rel_stdev_pct": round(s["rel_stdev"] * 100, 3),
                "samples": s["n"], "bandwidth_gbs": (round(thr["bandwidth_gbs"], 1)
                                                     if thr.get("bandwidth_gbs") is not None else ""),
                "verdict": cert.get("verdict", "")})
    return out


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def to_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "|".join("---" for _ in keys) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(k, "")).replace("|", "\\|") for k in keys) + " |")
    return "\n".join(lines) + "\n"
