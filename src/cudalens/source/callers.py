"""Who calls a host function, and what the caller does after: the facts rule Y1 needs to see a
launch checked by its caller (``reduce(...); getLastCudaError("reduce failed");`` in a ``.cpp``
beside the ``.cu`` that launches).

:func:`caller_facts` reads the analyzed file and the C++/CUDA sources of its folder (``.cu``,
``.cpp``, ``.cc``, ``.cxx``; at most :data:`MAX_SIBLINGS` files of at most :data:`MAX_BYTES` each)
and returns, for each named function, one :class:`CallSite` per call: the names of the calls in the
statement that follows it, and of every call after it in the calling function. It also lists the
error checks those sources can see (:attr:`CallerFacts.checks`): functions and function-like macros,
of the sources and of the headers they include (found beside them or in the build's include
folders), whose body reads the error state (``cudaGetLastError``/``cudaPeekAtLastError``), directly
or through another such check. A wrapper is known by what it does, not by its name.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from cudalens.source import syntax as syn

SUFFIXES = (".cu", ".cpp", ".cc", ".cxx")
MAX_SIBLINGS = 64
MAX_BYTES = 1_000_000
MAX_HEADERS = 32
READERS = frozenset({"cudaGetLastError", "cudaPeekAtLastError"})
_INCLUDE = re.compile(rb'^\s*#\s*include\s*["<]([^">]+)[">]', re.M)


@dataclass(frozen=True)
class CallSite:
    following: tuple[str, ...]  # calls of the statement right after the call (or the call enclosing it)
    later: tuple[str, ...]  # every call after it in the calling function


@dataclass(frozen=True)
class CallerFacts:
    sites: dict[str, tuple[CallSite, ...]] = field(default_factory=dict)
    checks: frozenset[str] = frozenset()  # functions and macros that read the error state


class DeferredCallerFacts:
    """:class:`CallerFacts` worked out on first use (``compute``), then kept: rule Y1 reads them only
    for a launch its own function leaves unchecked, and reading the folder's sources costs parses."""

    def __init__(self, compute: Callable[[], CallerFacts]) -> None:
        self._compute: Callable[[], CallerFacts] | None = compute
        self._facts = CallerFacts()

    def _get(self) -> CallerFacts:
        if self._compute is not None:
            self._facts, self._compute = self._compute(), None
        return self._facts

    @property
    def sites(self) -> dict[str, tuple[CallSite, ...]]:
        return self._get().sites

    @property
    def checks(self) -> frozenset[str]:
        return self._get().checks


def _siblings(path: str) -> list[str]:
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    me = os.path.abspath(path)
    out = [os.path.join(folder, n) for n in names if n.endswith(SUFFIXES) and os.path.join(folder, n) != me]
    return [p for p in out[:MAX_SIBLINGS] if os.path.isfile(p) and os.path.getsize(p) <= MAX_BYTES]


def _read(path: str) -> bytes | None:
    """The bytes of a source of at most MAX_BYTES, through the one guarded reader (a FIFO or device
    named like a header is never opened); None for anything else."""
    from cudalens.source.parse import source_text

    data = source_text(path).encode()
    return data if data and len(data) <= MAX_BYTES else None


def _following_statement(node: syn.Node) -> syn.Node | None:
    stmt = syn.statement_of(node)
    nxt = stmt.next_named_sibling if stmt is not None else None
    while nxt is not None and nxt.type == "comment":
        nxt = nxt.next_named_sibling
    return nxt


def _names(nodes: Iterable[syn.Node]) -> tuple[str, ...]:
    return tuple(syn.call_name(d) for d in sorted(nodes, key=lambda d: d.start_byte))


#: the node kinds read here, found by ONE tree-sitter query (compiling a query costs 20-40 ms a process, about
#: as much as the index of a whole tree that syn.nodes_of would build: the sources here are mostly a sibling
#: or a header parsed for this alone); pipeline.stages.preload compiles it before the workers fork. The
#: analysed file's own tree is indexed already (its source model read it): its index answers instead.
QUERY_KINDS = ("call_expression", "function_definition", "preproc_function_def")


def _found(node: syn.Node | None, kind: str, indexed: bool = False) -> list[syn.Node]:
    """The nodes of ``kind`` (one of QUERY_KINDS) under ``node``, as syn.nodes_of gives them (from the
    tree's index where ``indexed``, else by the query)."""
    if indexed:
        return syn.nodes_of(node, kind)
    return [n for n in syn.find_all(node, *QUERY_KINDS) if n.type == kind]


@dataclass(frozen=True)
class _Tree:
    """What sites_in and error_checks read of one tree, from one search of it."""

    functions: tuple[tuple[syn.Function, list[syn.Node]], ...]  # each function with its calls (as syn.calls gives them)
    macros: tuple[syn.Node, ...]  # the function-like macros


@functools.lru_cache(maxsize=2)
def _tree(root: syn.Node, indexed: bool) -> _Tree:
    """(:class:`_Tree` of the tree at ``root``; sites_in and error_checks ask of one tree in turn)"""
    found = syn.nodes_of(root, *QUERY_KINDS) if indexed else syn.find_all(root, *QUERY_KINDS)
    every = [n for n in found if n.type == "call_expression"]
    starts = [c.start_byte for c in every]
    out = []
    for node in (n for n in found if n.type == "function_definition"):
        start, end = node.start_byte, node.end_byte
        inside = every[bisect.bisect_left(starts, start):bisect.bisect_left(starts, end)]
        out.append((syn.function_of(node), [c for c in inside if c.end_byte <= end]))
    return _Tree(tuple(out), tuple(n for n in found if n.type == "preproc_function_def"))


def sites_in(tree: object, names: set[str], indexed: bool = False) -> dict[str, list[CallSite]]:
    """Per function of ``names``: a :class:`CallSite` for each of its calls in ``tree``'s host code.
    ``indexed``: the tree has an index (syntax.nodes_of), which is read instead of querying the tree."""
    out: dict[str, list[CallSite]] = {}
    for fn, calls in _tree(getattr(tree, "root_node", tree), indexed).functions:
        if fn.space != "host":
            continue
        called = [syn.call_name(c) for c in calls]  # in source order: the calls after c are a tail of the list
        starts = [c.start_byte for c in calls]
        for c, name in zip(calls, called):
            if name not in names or fn.name == name or syn.is_launch(c):
                continue
            later = tuple(called[bisect.bisect_left(starts, c.end_byte):])
            outer = c.parent.parent if c.parent is not None and c.parent.type == "argument_list" else None
            if outer is not None and outer.type == "call_expression":
                out.setdefault(name, []).append(CallSite((syn.call_name(outer),), later))
                continue
            nxt = _following_statement(c)
            out.setdefault(name, []).append(CallSite(
                _names(_found(nxt, "call_expression", indexed)) if nxt is not None else (), later))
    return out


#: a function-like macro's head (``define NAME(``), loosely: a header without one defines none
_FUNCTION_MACRO = re.compile(rb"define[\s\\]+[^\s(]+\(")


def error_checks(tree: object, indexed: bool = False) -> tuple[set[str], set[tuple[str, str]]]:
    """(functions whose body calls a reader, (macro, body) pairs) of one parsed source (``indexed``: as
    for :func:`sites_in`)."""
    read = _tree(getattr(tree, "root_node", tree), indexed)
    funcs = {fn.name for fn, calls in read.functions if any(syn.call_name(c) in READERS for c in calls)}
    macros = {(syn.text(n.child_by_field_name("name")), syn.text(n.child_by_field_name("value"))) for n in read.macros}
    return funcs, macros


def _headers(data: bytes, folder: str, include_dirs: Iterable[str],
             found: dict[tuple[str, str], str | None] | None = None) -> list[str]:
    """The files the ``#include``s of ``data`` (a source in ``folder``) name, found beside it or in
    ``include_dirs``. ``found``: (folder, name) -> its file (None: not found), kept by the caller over
    one search with the same ``include_dirs`` (the sources of a folder include the same headers)."""
    found = {} if found is None else found
    out = []
    for m in _INCLUDE.finditer(data):
        rel = m.group(1).decode(errors="replace")
        key = (folder, rel)
        if key not in found:
            paths = (os.path.join(d, rel) for d in (folder, *include_dirs))
            found[key] = next((os.path.abspath(p) for p in paths if os.path.isfile(p)), None)
        got = found[key]
        if got is not None:
            out.append(got)
    return out


def caller_facts(path: str, tree: object, names: Iterable[str], include_dirs: Iterable[str] = ()) -> CallerFacts:
    """What follows each call of the functions ``names`` in ``path`` (its parsed ``tree``) and in the
    sources of its folder, and the error checks those sources and their headers define."""
    wanted = set(names)
    if not wanted:
        return CallerFacts()
    dirs = tuple(include_dirs)
    found = {k: list(v) for k, v in sites_in(tree, wanted, indexed=True).items()}  # (its model read it)
    funcs, macros = error_checks(tree, indexed=True)
    texts: list[tuple[str, bytes]] = []
    own = _read(path)
    if own is not None:
        texts.append((path, own))
    keys = [n.encode() for n in wanted]
    for sibling in _siblings(path):
        data = _read(sibling)
        if data is None or not any(k in data for k in keys):
            continue
        texts.append((sibling, data))
        parsed = syn.parse_tree(data)
        for name, sites in sites_in(parsed, wanted).items():
            found.setdefault(name, []).extend(sites)
        f, m = error_checks(parsed)
        funcs |= f
        macros |= m
    seen: set[str] = set()
    later: list[bytes] = []  # headers whose function-like macros are read only if they name a check
    resolved: dict[tuple[str, str], str | None] = {}  # (for _headers: one search)
    queue = [h for p, data in texts for h in _headers(data, os.path.dirname(os.path.abspath(p)), dirs, resolved)]
    while queue and len(seen) < MAX_HEADERS:
        h = queue.pop(0)
        if h in seen:
            continue
        seen.add(h)
        data = _read(h)
        if data is None:
            continue
        if any(r.encode() in data for r in READERS):  # its functions may read the error state
            f, m = error_checks(syn.parse_tree(data))
            funcs |= f
            macros |= m
        elif _FUNCTION_MACRO.search(data):
            later.append(data)
        queue.extend(_headers(data, os.path.dirname(h), dirs, resolved))
    checks = set(READERS) | funcs
    for _ in range(3):  # macros that call a check (getLastCudaError(msg) -> __getLastCudaError(...))
        macros |= _named_macros(later, checks)
        checks |= {name for name, body in macros if any(re.search(rf"\b{re.escape(c)}\b", body) for c in checks)}
    return CallerFacts({k: tuple(v) for k, v in found.items()}, frozenset(checks))


def _named_macros(later: list[bytes], checks: set[str]) -> set[tuple[str, str]]:
    """The function-like macros of the headers in ``later`` that name one of ``checks`` somewhere in
    their text, parsed now and taken off the list: a macro whose body names a check is in such a
    header, so the others need no parse (cuda-samples' helper headers, read by every unit)."""
    if not all(c.isascii() for c in checks):
        keys = None  # (a name the bytes may not hold as written: every header read)
    else:
        keys = [c.encode() for c in checks]
    out: set[tuple[str, str]] = set()
    for data in [d for d in later if keys is None or any(k in d for k in keys)]:
        later.remove(data)
        out |= error_checks(syn.parse_tree(data))[1]
    return out
