"""``json.dumps(value, indent=N, default=...)``: the same text, made without the standard encoder's chain of
generators. Given an indent, ``json`` leaves its C encoder for a pure-Python one that yields every separator
and scalar through nested generators; the JSON report is written that way (each kernel record in its file's
worker, 3 MB on llm.c's 22 units, and the findings at the end).

The rules are ``json``'s own (``json.encoder._make_iterencode`` with ``ensure_ascii``, ``allow_nan``,
``check_circular`` and no ``sort_keys``): strings through its C escaper; ``None``, booleans, ints
(``int.__repr__``) and floats (``float.__repr__``, ``NaN``, ``Infinity``); lists and tuples as arrays, dicts
as objects in their order, with keys that are strings, floats, booleans, ``None`` or ints; anything else
handed to ``default`` and its result written in its place. A key of another type or a value ``default``
refuses raises TypeError, a container that holds itself ValueError, as ``json`` does.
``tests/test_json_text.py`` compares the two on generated values.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring_ascii as _string
from typing import Any

_INF = float("inf")


def _float(f: float) -> str:
    if f != f:
        return "NaN"
    if f == _INF:
        return "Infinity"
    if f == -_INF:
        return "-Infinity"
    return float.__repr__(f)


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, float):
        return _float(k)
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return int.__repr__(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def dumps(value: Any, indent: int = 2, default: Callable[[Any], Any] | None = None) -> str:
    """The text of ``json.dumps(value, indent=indent, default=default)``."""
    parts: list[str] = []
    put = parts.append
    pads = [""]  # the indent of each level
    one = " " * indent
    opened: set[int] = set()  # the containers being written (json's check for a circular reference)

    def enter(v: Any, level: int) -> str:
        if id(v) in opened:
            raise ValueError("Circular reference detected")
        opened.add(id(v))
        while len(pads) <= level + 1:
            pads.append(pads[-1] + one)
        return pads[level + 1]

    def array(v: Any, level: int) -> None:
        if not v:
            put("[]")
            return
        pad = enter(v, level)
        sep = ",\n" + pad
        put("[\n" + pad)
        first = True
        for x in v:
            if first:
                first = False
            else:
                put(sep)
            tx = type(x)  # (the common scalars, as write() puts them, without a call)
            if tx is str:
                put(_string(x))
            elif x is None:
                put("null")
            elif tx is int:
                put(int.__repr__(x))
            elif tx is float:
                put(_float(x))
            else:
                write(x, level + 1)
        put("\n" + pads[level] + "]")
        opened.discard(id(v))

    def obj(v: Any, level: int) -> None:
        if not v:
            put("{}")
            return
        pad = enter(v, level)
        sep = ",\n" + pad
        put("{\n" + pad)
        first = True
        for k, x in v.items():
            if first:
                first = False
            else:
                put(sep)
            put((_string(k) if type(k) is str else _string(_key(k))) + ": ")
            tx = type(x)  # (the common scalars, as write() puts them, without a call)
            if tx is str:
                put(_string(x))
            elif x is None:
                put("null")
            elif tx is int:
                put(int.__repr__(x))
            elif tx is float:
                put(_float(x))
            else:
                write(x, level + 1)
        put("\n" + pads[level] + "}")
        opened.discard(id(v))

    def write(v: Any, level: int) -> None:
        t = type(v)
        if t is str:
            put(_string(v))
        elif t is dict:
            obj(v, level)
        elif t is list or t is tuple:
            array(v, level)
        elif v is None:
            put("null")
        elif v is True:
            put("true")
        elif v is False:
            put("false")
        elif t is int:
            put(int.__repr__(v))
        elif t is float:
            put(_float(v))
        elif isinstance(v, str):  # subclasses, in json's order of tests
            put(_string(v))
        elif isinstance(v, int):
            put(int.__repr__(v))
        elif isinstance(v, float):
            put(_float(v))
        elif isinstance(v, (list, tuple)):
            array(v, level)
        elif isinstance(v, dict):
            obj(v, level)
        else:
            if id(v) in opened:
                raise ValueError("Circular reference detected")
            if default is None:
                raise TypeError(f"Object of type {t.__name__} is not JSON serializable")
            opened.add(id(v))
            write(default(v), level)
            opened.discard(id(v))

    write(value, 0)
    return "".join(parts)
