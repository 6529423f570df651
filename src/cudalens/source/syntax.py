"""The tree-sitter helpers: one module for the front end (parse, scope, kernel walk) and the rules.

The parser itself (:func:`parse_tree`), and the node helpers both sides use: source text and
lines, walks over the tree, calls and launches, function names (constant folding of literals, on
these nodes, is :mod:`cudalens.source.const_fold`).
The SourceModel carries kernels, launch sites and loops; rules that need syntax the model does not
keep (literals, binary expressions, which statement a call sits in) walk the tree-sitter nodes the
model keeps (``Kernel.node``, ``SourceModel.tree``) with these same helpers; they never parse text
themselves: the tree comes from the front end.

Conventions: lines are 1-based; ``text(node)`` is the node's source text; every helper tolerates
``None`` nodes by returning an empty result, so a rule given a model without trees yields nothing.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

Node = Any  # tree_sitter.Node


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_cuda
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_cuda.language()))


def parse_tree(data: bytes) -> Any:
    """Parse bytes with tree-sitter-cuda (the front end's one parser)."""
    return _parser().parse(data)

LOOP_TYPES = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})
FUNCTION_TYPES = frozenset({"function_definition"})


def text(node: Node | None) -> str:
    """The node's source text ('' for None)."""
    if node is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def texts_within(outer: Node, nodes: list[Node]) -> list[str]:
    """``[text(n) for n in nodes]`` for nodes of ``outer``'s subtree, sliced from one read of its bytes
    (each read of a node's text copies its bytes through a memoryview: this reads them once)."""
    data, start = outer.text, outer.start_byte
    return [data[n.start_byte - start:n.end_byte - start].decode("utf-8", errors="replace") for n in nodes]


def norm(node_or_text: Node | str | None) -> str:
    """Text with all whitespace removed, for comparing expressions as written."""
    s = node_or_text if isinstance(node_or_text, str) else text(node_or_text)
    return re.sub(r"\s+", "", s or "")


def line(node: Node) -> int:
    """1-based line where the node starts."""
    return node.start_point[0] + 1


line_of = line


def end_line_of(node: Node) -> int:
    """1-based line where the node ends."""
    return node.end_point[0] + 1


def iter_nodes(node: Node, skip: frozenset[str] = frozenset()) -> Iterator[Node]:
    """Depth-first pre-order walk over named nodes, not descending into nodes of the ``skip`` types
    (iterative: deep files do not hit recursion limits)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if n.type in skip and n is not node:
            continue
        stack.extend(reversed(n.named_children))


@dataclass(frozen=True)
class _Index:
    """Every node of one tree in preorder, with start bytes, and the positions of each node type."""

    nodes: tuple[Node, ...]
    starts: tuple[int, ...]
    by_type: dict[str, tuple[int, ...]]  # type -> preorder positions
    #: (helper, id of a node object of ``nodes``) -> what the helper answered for it (:func:`kept`)
    kept: dict[tuple[str, int], Any] = field(default_factory=dict)


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node


@functools.lru_cache(maxsize=4)
def _index(root: Node) -> _Index:
    """One walk of a tree, shared by every rule (bounded cache: the last few trees analyzed): every
    node, named or not, in preorder (each node's children read as one list: cheaper than a cursor's
    steps)."""
    nodes: list[Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        nodes.append(n)
        kids = n.children
        if kids:
            stack.extend(reversed(kids))  # (not reversed in place: the node keeps that list as its children)
    by_type: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        by_type.setdefault(n.type, []).append(i)
    return _Index(tuple(nodes), tuple([n.start_byte for n in nodes]), {k: tuple(v) for k, v in by_type.items()})


#: the index :func:`_position` used last: most calls in a row ask about one tree, whose root is then not looked
#: for again (a walk up the parents makes a node object per step)
_LAST: list[_Index] = []


def _position(node: Node) -> tuple[_Index, int]:
    """The index of node's tree and node's preorder position in it."""
    start = node.start_byte
    for idx in _LAST:  # node is in this tree where a node of it at node's start byte equals node
        i = bisect.bisect_left(idx.starts, start)
        while i < len(idx.nodes) and idx.starts[i] == start:
            if idx.nodes[i] == node:
                return idx, i
            i += 1
    idx = _index(_root(node))
    _LAST[:] = [idx]
    i = bisect.bisect_left(idx.starts, start)
    while i < len(idx.nodes) and idx.nodes[i] != node:
        i += 1
    return idx, i


def _span(node: Node) -> tuple[_Index, int, int]:
    """The index of node's tree and the preorder range [i, j) of node's subtree, less the zero-width
    nodes (a token error recovery inserted) at its end: j is the first node starting at node's end."""
    idx, i = _position(node)
    return idx, i, bisect.bisect_left(idx.starts, node.end_byte, lo=i + 1)


def walk(node: Node | None) -> Iterator[Node]:
    """Every node under ``node`` (itself included), in source order (preorder)."""
    if node is None:
        return iter(())
    idx, i, j = _span(node)
    return iter(idx.nodes[i:j])


def _of_types(idx: _Index, i: int, j: int, types: tuple[str, ...]) -> list[Node]:
    """The nodes of ``types`` at preorder positions [i, j) of ``idx``, in preorder."""
    positions: list[int] = []
    for t in types:
        pos = idx.by_type.get(t, ())
        positions.extend(pos[bisect.bisect_left(pos, i):bisect.bisect_left(pos, j)])
    if len(types) > 1:
        positions.sort()
    return [idx.nodes[p] for p in positions]


def nodes_of(node: Node | None, *types: str) -> list[Node]:
    """The nodes of the given types under ``node`` (itself included), in source order; not a
    zero-width node (a missing identifier error recovery inserted) where ``node`` ends."""
    if node is None:
        return []
    return _of_types(*_span(node), types)


def descendants(node: Node | None, *types: str) -> list[Node]:
    """The nodes of the given (named) types in ``node``'s subtree, itself included, in preorder: exactly those
    a walk of its named children finds (``iter_nodes``; a token has no children), zero-width ones where
    ``node`` ends included (:func:`nodes_of` stops before them). Found in the tree's index: where the tree
    is not indexed yet, this indexes it (one walk of the whole tree)."""
    if node is None:
        return []
    idx, i = _position(node)
    return _of_types(idx, i, i + node.descendant_count, types)  # (the subtree's nodes, in the index's preorder)


def compile_query(*types: str) -> None:
    """Compile now the query :func:`find_all` makes for ``types`` (given in the same order): about 20-40 ms
    each, once per process. ``pipeline.stages.preload`` compiles the ones every file's analysis asks for
    before the workers fork."""
    _query(types)


@functools.lru_cache(maxsize=32)
def _query(types: tuple[str, ...]) -> tuple[Any, Any]:  # (a query capturing every node of those types, QueryCursor)
    from tree_sitter import Query, QueryCursor

    return Query(_parser().language, " ".join(f"({t}) @n" for t in types)), QueryCursor


def find_all(node: Node | None, *types: str) -> list[Node]:
    """The named nodes of the given types under ``node`` (itself included), in source order, as :func:`nodes_of`
    gives them, found by a tree-sitter query: the walk runs in C, and no index of the tree is built."""
    if node is None:
        return []
    (query, cursor), s, e = _query(tuple(types)), node.start_byte, node.end_byte
    got = cursor(query).captures(node).get("n", [])
    return sorted((n for n in got if n.start_byte >= s and n.end_byte <= e), key=lambda n: (n.start_byte, -n.end_byte))


def strip_parens(node: Node | None) -> Node | None:
    """The expression inside any number of parentheses."""
    while node is not None and node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            break
        node = inner[0]
    return node


def ancestors(node: Node) -> Iterator[Node]:
    n = node.parent
    while n is not None:
        yield n
        n = n.parent


def enclosing_loops(node: Node) -> list[Node]:
    """Loop statements around ``node`` inside its function, innermost first."""
    loops = []
    for a in ancestors(node):
        if a.type in FUNCTION_TYPES or a.type == "lambda_expression":
            break
        if a.type in LOOP_TYPES:
            loops.append(a)
    return loops


def contains(outer: Node, inner: Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


# ----------------------------------------------------------------------------- functions


@dataclass(frozen=True)
class Function:
    """A function definition with its CUDA execution space."""

    name: str
    node: Node  # the function_definition
    space: str  # "global" | "device" | "host" | "host_device"

    @property
    def body(self) -> Node | None:
        return self.node.child_by_field_name("body")

    @property
    def runs_on_device(self) -> bool:
        return self.space in {"global", "device", "host_device"}


def function_declarator(fn: Node) -> Node | None:
    """The ``function_declarator`` of a function definition (through pointer/reference declarators)."""
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    return decl


def function_name(fn: Node) -> str:
    """The function's name without scope or template arguments: ``Foo::bar`` -> ``bar`` ('' if none)."""
    fd = function_declarator(fn)
    d = fd.child_by_field_name("declarator") if fd is not None else None
    if d is None:
        return ""
    if d.type == "template_function":
        d = d.child_by_field_name("name") or d
    return text(d).split("::")[-1].strip()


def _space(fn: Node) -> str:
    kinds = {c.type for c in fn.children}
    # Some grammars wrap the qualifiers; fall back to the text before the declarator.
    head = text(fn)[: max(0, (fn.child_by_field_name("declarator") or fn).start_byte - fn.start_byte)]
    glob = "__global__" in kinds or "__global__" in head
    dev = "__device__" in kinds or "__device__" in head
    host = "__host__" in kinds or "__host__" in head
    if glob:
        return "global"
    if dev and host:
        return "host_device"
    if dev:
        return "device"
    return "host"


def functions(tree: Any) -> list[Function]:
    """All function definitions in a tree (templates included), in source order."""
    if tree is None:
        return []
    return list(_functions(getattr(tree, "root_node", tree)))


def function_of(node: Node) -> Function:
    """The :class:`Function` of a function_definition node."""
    return Function(function_name(node), node, _space(node))


@functools.lru_cache(maxsize=8)
def _functions(root: Node) -> tuple[Function, ...]:
    """(:func:`functions`: asked by many rules of one tree)"""
    return tuple(function_of(n) for n in nodes_of(root, "function_definition"))


def function_node(node: Node | None) -> Node | None:
    """The function_definition for a model's Kernel.node (which may be a template wrapper)."""
    if node is None:
        return None
    if node.type == "function_definition":
        return node
    found = nodes_of(node, "function_definition")
    return found[0] if found else None


def enclosing_function(node: Node) -> Node | None:
    for a in ancestors(node):
        if a.type == "function_definition":
            return a
    return None


# ----------------------------------------------------------------------------- calls


def kept(what: str, node: Node | None, compute: Callable[[Any], Any]) -> Any:
    """``compute(node)``, kept under ``what`` with the index :func:`_position` used last where ``node`` is
    a node object that index holds (its id then stays its own while the index lives): the rules ask the
    name of each call of a function many times, of the very nodes :func:`nodes_of` gave them, and several
    rules ask for the copies of one function. ``compute`` must answer from the node's subtree alone, and
    the caller must not change what it answers (it is the kept value)."""
    if node is None or not _LAST:
        return compute(node)
    idx = _LAST[0]
    key = (what, id(node))
    got = idx.kept.get(key, idx)  # (the index itself: not kept yet)
    if got is not idx:
        return got
    got = compute(node)
    start = node.start_byte
    i = bisect.bisect_left(idx.starts, start)
    while i < len(idx.nodes) and idx.starts[i] == start:
        if idx.nodes[i] is node:
            idx.kept[key] = got
            break
        i += 1
    return got


def is_launch(call: Node) -> bool:
    """True for ``kernel<<<...>>>(...)``."""
    return call.type == "call_expression" and kept("launch", call, _is_launch)


def _is_launch(call: Node) -> bool:
    return any(c.type == "kernel_call_syntax" for c in call.children)


def call_name(call: Node) -> str:
    """The called name without scope: ``std::pow`` -> ``pow``, ``cg::sync`` -> ``sync``."""
    return kept("name", call, _call_name)


def _call_name(call: Node) -> str:
    fn = call.child_by_field_name("function")
    if fn is None:
        return ""
    while fn.type in {"qualified_identifier", "template_function"}:
        nxt = fn.child_by_field_name("name")
        if nxt is None:
            break
        fn = nxt
    if fn.type == "field_expression":
        fn = fn.child_by_field_name("field") or fn
    return text(fn)


def call_args(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    return [a for a in args.named_children if a.type != "comment"]


def calls(node: Node | None) -> list[Node]:
    """Call expressions (launches included) under ``node``, in source order."""
    return nodes_of(node, "call_expression")


def launches(node: Node | None) -> list[Node]:
    return [c for c in calls(node) if is_launch(c)]


def launch_kernel_name(call: Node) -> str:
    return text(call.child_by_field_name("function"))


# ----------------------------------------------------------------------------- statements


def statement_of(node: Node) -> Node | None:
    """The nearest enclosing statement (expression_statement, declaration, return, if, ...)."""
    for a in [node, *ancestors(node)]:
        if a.type.endswith("_statement") or a.type == "declaration":
            return a
    return None


def declared_names(decl: Node) -> list[tuple[str, Node | None]]:
    """(name, initializer) for each declarator of a declaration (or parameter declaration)."""
    out: list[tuple[str, Node | None]] = []
    for d in decl.children_by_field_name("declarator"):
        out.extend(declared_names_of(d))
    return out


def declared_names_of(d: Node) -> list[tuple[str, Node | None]]:
    """(name, initializer) of one declarator node; [] when it has no plain name."""
    value = None
    if d.type == "init_declarator":
        value = d.child_by_field_name("value")
        d = d.child_by_field_name("declarator")
    while d is not None and d.type in {"pointer_declarator", "reference_declarator", "array_declarator"}:
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in d.named_children if c.type == "identifier"), None)
        d = nxt
    return [(text(d), value)] if d is not None and d.type == "identifier" else []


def is_array_declarator(d: Node) -> bool:
    """True for `T name[N]` (an array object), false for pointers and `T (*p)[N]`."""
    if d.type == "init_declarator":
        d = d.child_by_field_name("declarator")
    return d is not None and d.type == "array_declarator"


def base_name(node: Node | None) -> str:
    """The variable a pointer expression is based on: ``&h[0]`` -> h, ``(void**)&d`` -> d,
    ``v.data()`` -> v, ``d + i*n`` -> d."""
    node = strip_parens(node)
    while node is not None:
        t = node.type
        if t == "identifier":
            return text(node)
        if t == "cast_expression":
            node = node.child_by_field_name("value")
        elif t in {"pointer_expression", "unary_expression"}:
            node = node.child_by_field_name("argument")
        elif t == "subscript_expression":
            node = node.child_by_field_name("argument")
        elif t == "binary_expression":
            node = node.child_by_field_name("left")
        elif t == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "field_expression":
                node = fn.child_by_field_name("argument")
            else:
                return ""
        elif t == "field_expression":
            node = node.child_by_field_name("argument")
        elif t == "parenthesized_expression":
            inner = strip_parens(node)
            if inner is node:  # ``(p q)``: more than one expression inside, no single base
                return ""
            node = inner
        else:
            return ""
    return ""


def source_root(source: Any) -> Node | None:
    tree = getattr(source, "tree", None)
    if tree is None:
        return None
    return getattr(tree, "root_node", tree)
