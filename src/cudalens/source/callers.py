"""Who calls a host function, and what the caller does right after: the facts rule Y1 needs to see
a launch checked by its caller (``reduce(...); getLastCudaError("reduce failed");`` in a ``.cpp``
beside the ``.cu`` that launches).

:func:`calls_after` reads the analyzed file and the C++/CUDA sources of its folder (``.cu``, ``.cpp``,
``.cc``, ``.cxx``; at most :data:`MAX_SIBLINGS` files of at most :data:`MAX_BYTES` each) and returns,
for each named function, one entry per call site: the names of the calls in the statement that
follows the call (empty when none follows). A site whose call is itself the argument of another
call (``CHECK(reduce(...))``) records that outer call's name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from cudalens.source import syntax as syn

SUFFIXES = (".cu", ".cpp", ".cc", ".cxx")
MAX_SIBLINGS = 64
MAX_BYTES = 1_000_000

CallSites = Mapping[str, tuple[tuple[str, ...], ...]]


def _siblings(path: str) -> list[str]:
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    me = os.path.abspath(path)
    out = [os.path.join(folder, n) for n in names if n.endswith(SUFFIXES) and os.path.join(folder, n) != me]
    return [p for p in out[:MAX_SIBLINGS] if os.path.isfile(p) and os.path.getsize(p) <= MAX_BYTES]


def _following_statement(node: syn.Node) -> syn.Node | None:
    stmt = syn.statement_of(node)
    return stmt.next_named_sibling if stmt is not None else None


def sites_in(tree: object, names: set[str]) -> dict[str, list[tuple[str, ...]]]:
    """Per function of ``names``: the call names after each of its calls in ``tree``'s host code."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for fn in syn.functions(tree):
        if fn.space != "host":
            continue
        for c in syn.calls(fn.node):
            name = syn.call_name(c)
            if name not in names or fn.name == name or syn.is_launch(c):
                continue
            outer = c.parent.parent if c.parent is not None and c.parent.type == "argument_list" else None
            if outer is not None and outer.type == "call_expression":
                out.setdefault(name, []).append((syn.call_name(outer),))
                continue
            nxt = _following_statement(c)
            after = tuple(syn.call_name(d) for d in sorted(syn.calls(nxt), key=lambda d: d.start_byte)) if nxt else ()
            out.setdefault(name, []).append(after)
    return out


def calls_after(path: str, tree: object, names: Iterable[str]) -> CallSites:
    """For each function of ``names``: what follows each of its calls in ``path`` (its parsed
    ``tree``) and in the sources of its folder."""
    wanted = set(names)
    if not wanted:
        return MappingProxyType({})
    found = sites_in(tree, wanted)
    for sibling in _siblings(path):
        try:
            with open(sibling, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if not any(n.encode() in data for n in wanted):
            continue
        for name, sites in sites_in(syn.parse_tree(data), wanted).items():
            found.setdefault(name, []).extend(sites)
    return MappingProxyType({k: tuple(v) for k, v in found.items()})
