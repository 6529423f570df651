"""Type facts host code sizes launches with: ``typedef``s (``typedef __nv_bfloat16 floatX;`` under the
``#if defined(ENABLE_BF16)`` branch the file's macros select) and the ``static constexpr`` members of
structs and struct templates (``Packed128<T>::size = sizeof(int4) / sizeof(T)``), read from a file and
the project headers it includes with quotes (:func:`header_facts`)."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cudalens.source.expr import node_text

_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
_MAX_HEADERS = 64
_CACHE_SIZE = 128  # files whose facts are kept (the launch layer asks again for every site of a file)


_text = node_text


@dataclass(frozen=True)
class TypeFacts:
    """``typedefs``: name -> type text; ``statics``: (struct, member) -> (template parameters, value
    text); names defined differently in branches the macros do not decide are left out (``unsure``)."""

    typedefs: Mapping[str, str]
    statics: Mapping[tuple[str, str], tuple[tuple[str, ...], str]]
    unsure: frozenset[str]


@dataclass
class _Collected:
    """The facts while the walk gathers them (frozen into :class:`TypeFacts` at the end)."""

    typedefs: dict[str, str] = field(default_factory=dict)
    statics: dict[tuple[str, str], tuple[tuple[str, ...], str]] = field(default_factory=dict)
    unsure: set[str] = field(default_factory=set)

    def add_typedef(self, name: str, type_text: str, sure: bool) -> None:
        if not sure:
            self.unsure.add(name)
            self.typedefs.pop(name, None)
        elif name not in self.unsure:
            self.typedefs[name] = type_text

    def add_static(self, key: tuple[str, str], value: tuple[tuple[str, ...], str]) -> None:
        self.statics[key] = value


class _Recorded(_Collected):
    """What a walk adds, in order (``ops``), to be added to a :class:`_Collected` again: a walk reads
    nothing back from what it collected, so the same additions give the same facts."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[tuple[str, Any, Any, Any]] = []

    def add_typedef(self, name: str, type_text: str, sure: bool) -> None:
        self.ops.append(("t", name, type_text, sure))

    def add_static(self, key: tuple[str, str], value: tuple[tuple[str, ...], str]) -> None:
        self.ops.append(("s", key, value, None))

    def replay(self, facts: _Collected) -> None:
        for kind, a, b, c in self.ops:
            if kind == "t":
                facts.add_typedef(a, b, c)
            else:
                facts.add_static(a, b)


class _Asked:
    """The macros a walk decides branches with, each name it asks about kept with the answer."""

    def __init__(self, defined: set[str]) -> None:
        self.defined = defined
        self.asked: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        got = name in self.defined
        self.asked[name] = got  # type: ignore[index]
        return got


def _condition(node: Any, defined: set[str]) -> bool | None:
    """The value of a preprocessor condition made of ``defined(X)``, ``!``, ``&&``, ``||``; None otherwise."""
    if node is None:
        return None
    if node.type == "preproc_defined":
        ident = next((c for c in node.named_children if c.type == "identifier"), None)
        return _text(ident) in defined if ident is not None else None
    if node.type == "parenthesized_expression" and node.named_children:
        return _condition(node.named_children[0], defined)
    if node.type == "unary_expression" and _text(node.child_by_field_name("operator")) == "!":
        v = _condition(node.child_by_field_name("argument"), defined)
        return None if v is None else not v
    if node.type == "binary_expression":
        op = _text(node.child_by_field_name("operator"))
        a = _condition(node.child_by_field_name("left"), defined)
        b = _condition(node.child_by_field_name("right"), defined)
        if op == "&&":
            return False if a is False or b is False else (None if a is None or b is None else True)
        if op == "||":
            return True if a is True or b is True else (None if a is None or b is None else False)
    return None


def _walk(node: Any, defined: set[str], sure: bool, facts: _Collected) -> None:
    for c in node.named_children:
        t = c.type
        if t in ("preproc_if", "preproc_ifdef", "preproc_elif"):
            if t == "preproc_ifdef":
                name = _text(c.child_by_field_name("name"))
                cond: bool | None = (name in defined) != _text(c.children[0]).endswith("ifndef")
            else:
                cond = _condition(c.child_by_field_name("condition"), defined)
            alt = c.child_by_field_name("alternative")
            body = [x for x in c.named_children if x != alt and x != c.child_by_field_name("condition")
                    and x != c.child_by_field_name("name")]
            if cond is not False:
                for x in body:
                    _walk_one(x, defined, sure and cond is True, facts)
            if alt is not None and cond is not True:
                if alt.type == "preproc_else":
                    _walk(alt, defined, sure and cond is False, facts)
                else:
                    _walk(_Wrap(alt), defined, sure and cond is False, facts)
        else:
            _walk_one(c, defined, sure, facts)


class _Wrap:
    """A node seen as the only child of a parent (an ``#elif`` walked as a nested ``#if``)."""

    def __init__(self, node: Any) -> None:
        self.named_children = [node]


def _walk_one(c: Any, defined: set[str], sure: bool, facts: _Collected) -> None:
    t = c.type
    if t == "type_definition":
        ty = c.child_by_field_name("type")
        for d in c.children_by_field_name("declarator"):
            if d.type == "type_identifier":
                facts.add_typedef(_text(d), " ".join(_text(ty).split()), sure)
    elif t == "template_declaration":
        plist = c.child_by_field_name("parameters")
        names = tuple(_text(x.named_children[-1]) for x in (plist.named_children if plist is not None else ())
                      if x.named_children)
        spec = next((x for x in c.named_children if x.type in ("struct_specifier", "class_specifier")), None)
        if spec is not None:
            _members(spec, names, sure, facts)
    elif t in ("struct_specifier", "class_specifier"):
        _members(c, (), sure, facts)
    elif t == "declaration":
        spec = c.child_by_field_name("type")
        if spec is not None and spec.type in ("struct_specifier", "class_specifier"):
            _members(spec, (), sure, facts)
    elif t in ("preproc_if", "preproc_ifdef"):
        _walk(_Wrap(c), defined, sure, facts)
    elif t in ("namespace_definition", "linkage_specification", "declaration_list"):
        _walk(c if t != "namespace_definition" else c.child_by_field_name("body") or c, defined, sure, facts)


def _members(spec: Any, tparams: tuple[str, ...], sure: bool, facts: _Collected) -> None:
    name = _text(spec.child_by_field_name("name"))
    body = spec.child_by_field_name("body")
    if not name or body is None:
        return
    for f in body.named_children:
        if f.type != "field_declaration":
            continue
        words = {_text(x) for x in f.children if x.type in ("storage_class_specifier", "type_qualifier")}
        value = f.child_by_field_name("default_value")
        d = f.child_by_field_name("declarator")
        if "static" in words and ("constexpr" in words or "const" in words) and value is not None and d is not None \
                and d.type == "field_identifier":
            key = (name, _text(d))
            if sure:
                facts.add_static(key, (tparams, _text(value)))


def header_facts(path: str, root: Any, defined: set[str]) -> TypeFacts:
    """The type facts of the parsed file ``root`` (at ``path``) and of the headers it includes with
    quotes, found next to the including file (each read once, at most 64), with the macros
    ``defined`` deciding ``#if defined(...)`` branches.

    Kept for the last 128 files by (path, macros, the file's text): asked again, the answer is
    reused while every header it read (or looked for) has the same modification time and size."""
    key = (os.path.realpath(path), frozenset(defined), hashlib.blake2b(root.text or b"", digest_size=16).digest())
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
    if hit is not None and all(_stat(p) == sig for p, sig in hit[1]):
        return hit[0]
    facts, read = _read_facts(path, root, defined)
    with _LOCK:
        _CACHE[key] = (facts, read)
        _CACHE.move_to_end(key)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return facts


_Signature = tuple[int, int] | None  # (modification time in ns, size) of a file; None: no such file
_CACHE: OrderedDict[tuple[str, frozenset[str], bytes], tuple[TypeFacts, tuple[tuple[str, _Signature], ...]]] = (
    OrderedDict())
_LOCK = threading.Lock()


def _stat(path: str) -> _Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if stat.S_ISREG(st.st_mode) else None


def _includes(root: Any) -> tuple[str, ...]:
    """The files a parsed file includes with quotes, as written, in order."""
    return tuple(m.group(1) for m in _INCLUDE_RE.finditer(_text(root)))


@functools.lru_cache(maxsize=_MAX_HEADERS)
def _header_includes(path: str, signature: _Signature) -> tuple[str, ...]:
    """:func:`_includes` of the header at ``path`` as it is at ``signature``, read once."""
    return _includes(_header_root(path, signature))


#: (header's real path, its signature) -> [(the macros its walk asked about, with the answers; what the
#: walk added)]: a header many units include is walked once per answer its branches get
_WALKS: dict[tuple[str, _Signature], list[tuple[tuple[tuple[str, bool], ...], _Recorded]]] = {}


def _header_walk(path: str, signature: _Signature, root: Any, defined: set[str]) -> _Recorded:
    """What :func:`_walk` of the header ``root`` (at ``path``, ``signature``) adds with the macros
    ``defined``: reused where each macro the walk asked about has the same answer."""
    with _LOCK:
        kept = list(_WALKS.get((path, signature), ()))
    for asked, walked in kept:
        if all((name in defined) == got for name, got in asked):
            return walked
    walked, answers = _Recorded(), _Asked(defined)
    _walk(root, answers, True, walked)  # type: ignore[arg-type]
    with _LOCK:
        if len(_WALKS) >= _CACHE_SIZE:
            _WALKS.clear()
        _WALKS.setdefault((path, signature), []).append((tuple(answers.asked.items()), walked))
    return walked


@functools.lru_cache(maxsize=_MAX_HEADERS)
def _header_root(path: str, signature: _Signature) -> Any:
    """The parsed header at ``path`` (real path) as it is at ``signature``: a header many units
    include (llm.c's ``common.h``) is parsed once while it stays the same."""
    from cudalens.source.parse import parse_tree, read_source

    return parse_tree(read_source(Path(path))).root_node


def _read_facts(path: str, root: Any, defined: set[str]) -> tuple[TypeFacts, tuple[tuple[str, _Signature], ...]]:
    """:func:`header_facts` read afresh, with the signature of every header looked for."""
    facts = _Collected()
    seen = {os.path.realpath(path)}
    looked: dict[str, _Signature] = {}
    queue: list[tuple[str, Any]] = [(path, root)]
    order: list[tuple[str, Any]] = []
    while queue and len(seen) <= _MAX_HEADERS:
        cur, tree_root = queue.pop(0)
        if tree_root is None:
            try:
                tree_root = _header_root(cur, looked[cur])
                includes = _header_includes(cur, looked[cur])
            except Exception:  # noqa: BLE001 - an unreadable header gives no facts
                continue
        else:
            includes = _includes(tree_root)
        order.append((cur, tree_root))
        for name in includes:
            cand = os.path.realpath(os.path.join(os.path.dirname(cur), name))
            if cand in seen or cand in looked:
                continue
            looked[cand] = _stat(cand)
            if looked[cand] is not None:
                seen.add(cand)
                queue.append((cand, None))
    for p, r in reversed(order):  # the headers first, then the file: a later definition wins
        if r is root:
            _walk(r, defined, True, facts)
        else:
            _header_walk(p, looked[p], r, defined).replay(facts)
    frozen = TypeFacts(MappingProxyType(dict(facts.typedefs)), MappingProxyType(dict(facts.statics)),
                       frozenset(facts.unsure))
    return frozen, tuple(looked.items())
