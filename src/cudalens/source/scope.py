"""File scope for the kernel walk: the file's constants, macros, ``__shared__``/``__constant__``/
``__device__`` arrays and small ``__device__`` helpers (for inlining), and their values as
expressions (:class:`FileScope`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from cudalens.source import expr as E
from cudalens.source import syntax as syn
from cudalens.source.declarations import declarator_name_node, params
from cudalens.source.limits import Budget
from cudalens.source.model import ArrayDecl
from cudalens.source.syntax import parse_tree
from cudalens.source.types import element_bytes, strip_type

_MAX_INLINE_DEPTH = 4
_SPACE_QUALS = (("__shared__", "shared"), ("__constant__", "constant"), ("__device__", "global"),
                ("__managed__", "global"))



def _line(n: Any) -> int:
    return n.start_point[0] + 1


_text = E.node_text


_NAMES = frozenset({"identifier", "field_identifier"})


def _declarator_name(d: Any) -> str | None:
    node = declarator_name_node(d, _NAMES)
    return _text(node) if node is not None else None


def _array_dims(d: Any) -> list[Any]:
    """Size nodes of an array declarator, outermost dimension first (None for ``[]``)."""
    sizes = []
    cur = d
    while cur is not None and cur.type == "array_declarator":
        sizes.append(cur.child_by_field_name("size"))
        cur = cur.child_by_field_name("declarator")
    return list(reversed(sizes))


def _space_of_declaration(decl: Any) -> str:
    head = []
    for c in decl.children:
        if c.type in ("init_declarator", "array_declarator", "identifier", "pointer_declarator"):
            break
        head.append(_text(c))
    words = " ".join(head)
    for q, space in _SPACE_QUALS:
        if q in words:
            return space
    return "local"


@dataclass
class FileScope:
    """File-level facts the kernel walk needs: macros, constants, global arrays, device helpers."""

    defines: dict[str, str]
    const_exprs: dict[str, E.Expr] = field(default_factory=dict)  # file-level const ints
    arrays: dict[str, ArrayDecl] = field(default_factory=dict)  # __constant__/__shared__/__device__ arrays
    helpers: dict[str, tuple[tuple[str, ...], Any]] = field(default_factory=dict)  # device fn -> (params, body)
    _define_cache: dict[str, E.Expr] = field(default_factory=dict)
    budget: Budget | None = None  # the file's time and memory budget (checked once per statement walked)
    facts: Any = None  # typedefs and static members of the file and its headers (type_facts.TypeFacts), if read
    host_fns: dict[str, tuple[tuple[str, ...], Any]] = field(default_factory=dict)  # small host functions run
    _calls_deep: int = 0
    _defining: int = 0  # macro values being read now (define_expr calls in progress)
    _values: dict[str, E.Expr] | None = None  # every macro's value, once all are read (macro_values)

    @classmethod
    def build(cls, root: Any, defines: dict[str, str], functions: list[tuple[Any, Any, bool, Any]]) -> "FileScope":
        scope = cls(defines)
        for decl in _file_declarations(root):
            space = _space_of_declaration(decl)
            tnode = decl.child_by_field_name("type")
            type_text = _text(tnode) if tnode is not None else ""
            is_const = any(_text(c) in ("const", "constexpr") for c in decl.children if c.type in
                           ("type_qualifier", "storage_class_specifier")) or "constexpr" in _text(decl).split("=")[0]
            for d in decl.children_by_field_name("declarator"):
                array = scope.array_decl(decl, d, space if space != "local" else "global", type_text)
                if array is not None:
                    scope.arrays[array.name] = array
                    continue
                name = _declarator_name(d)
                if name is not None and d.type == "init_declarator" and is_const and "*" not in _text(
                        d.child_by_field_name("declarator")):
                    scope.const_exprs[name] = scope.expr(d.child_by_field_name("value"))
        for fn, quals, _t, _tp in functions:
            if "__device__" in quals and "__global__" not in quals:
                name = syn.function_name(fn)
                body = fn.child_by_field_name("body")
                if name and body is not None and syn.function_declarator(fn) is not None:
                    scope.helpers[name] = (tuple(p.name for p in params(fn)), body)
        return scope

    # -- constants ---------------------------------------------------------------------------
    def define_expr(self, name: str) -> E.Expr:
        """A macro's value as an expression (its own macros left as symbols); unknown if unparsable."""
        if name not in self._define_cache:
            self._define_cache[name] = E.unknown(f"macro {name}")  # guards self-reference
            self._defining += 1
            try:
                self._define_cache[name] = _parse_value_text(self.defines.get(name, ""), self)
            finally:
                self._defining -= 1
        return self._define_cache[name]

    def resolve_const(self, name: str) -> E.Expr:
        if name in self.const_exprs:
            return self.const_exprs[name]
        if name in self.defines:
            return ("v", name)
        if self.facts is not None:
            got = self._type_fact(name)
            if got is not None:
                return got
        return E.unknown(f"name {name}")

    def _type(self, name: str) -> str:
        """A type name through the known typedefs (at most 8 deep)."""
        for _ in range(8):
            nxt = self.facts.typedefs.get(name) if self.facts is not None else None
            if nxt is None:
                break
            name = nxt
        return name

    def _type_fact(self, name: str) -> E.Expr | None:
        """``sizeof(floatX)`` through a typedef; ``S<args>::m`` / ``alias::m``, a static constant member."""
        if name.startswith("sizeof(") and name.endswith(")"):
            size = element_bytes(self._type(name[7:-1]))
            return E.num(size) if size is not None else None
        owner, sep, member = name.rpartition("::")
        if not sep or not member.isidentifier():
            return None
        owner = self._type(owner)
        base, lt, rest = owner.partition("<")
        args = [a.strip() for a in rest.rstrip(">").split(",")] if lt else []
        found = self.facts.statics.get((base.strip(), member))
        if found is None or len(found[0]) != len(args):
            return None
        text = found[1]
        for p, a in zip(found[0], args):
            text = re.sub(rf"\b{re.escape(p)}\b", self._type(a), text)
        e = _parse_value_text(text, self)
        return None if E.unknowns(e) else e

    def expr(self, node: Any) -> E.Expr:
        return E.from_node(node, self.resolve_const, on_call=self._pure_call)

    def _pure_call(self, node: Any, resolve: Any = None) -> E.Expr:
        name = _text(node.child_by_field_name("function"))
        args = node.child_by_field_name("arguments")
        if name in self.host_fns and args is not None:
            got = self._host_call(name, args, resolve or self.resolve_const)
            if got[0] == "n" or not (name in E.PURE_CALLS or name in E.CEIL_DIV_CALLS):
                return got
        if (name in E.PURE_CALLS or name in E.CEIL_DIV_CALLS) and args is not None:
            if resolve is None:
                return ("f", name, tuple(self.expr(a) for a in args.named_children))
            return ("f", name, tuple(E.from_node(a, resolve, on_call=lambda n: self._pure_call(n, resolve))
                                     for a in args.named_children))
        return E.unknown(f"call {name}")

    def _host_call(self, name: str, args: Any, resolve: Any) -> E.Expr:
        """A call of a small host function of the file (:attr:`host_fns`) on known arguments, run."""
        from cudalens.source.host_calls import MAX_DEPTH, run_call

        if self._calls_deep >= MAX_DEPTH:
            return E.unknown(f"call {name}")
        values = self.macro_values()
        try:
            nums = [E.eval_scalar(E.from_node(a, resolve, on_call=lambda n: self._pure_call(n, resolve)), values)
                    for a in args.named_children]
        except (E.Unknown, RecursionError):
            return E.unknown(f"call {name}")
        params_, body = self.host_fns[name]
        self._calls_deep += 1
        try:
            got = run_call(body, params_, nums, self.resolve_const, self._pure_call, values)
        finally:
            self._calls_deep -= 1
        return E.num(got) if got is not None else E.unknown(f"call {name}")

    def macro_values(self, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        """Values for every macro symbol: the file's ``#define``s, overridden by ``overrides`` (a new dict)."""
        vals: dict[str, Any] = dict(self._macro_map())
        if overrides:
            vals.update(overrides)
        return vals

    def _macro_map(self) -> dict[str, E.Expr]:
        """Every macro's value (not to be changed): read once, then kept. A read that starts while a
        macro's own value is being read (a host call in a macro runs with the macros) is not kept:
        that macro's value is still its guard then."""
        if self._values is not None:
            return self._values
        nested = self._defining > 0
        vals = {name: self.define_expr(name) for name in self.defines}
        if not nested:
            self._values = vals
        return vals

    def const_value(self, node: Any, extra: dict[str, Any] | None = None) -> int | float | None:
        if node is not None and node.type == "identifier":  # (most values asked for are a bare name)
            return self._name_value(_text(node), extra)
        try:
            vals: dict[str, Any] = self._macro_map()
            if extra:
                vals = {**vals, **extra}

            def resolve(name: str) -> E.Expr:
                if extra and name in extra:
                    v = extra[name]
                    return E.num(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else ("v", name)
                return self.resolve_const(name)

            return E.eval_scalar(E.from_node(node, resolve, on_call=lambda n: self._pure_call(n, resolve)), vals)
        except (E.Unknown, RecursionError):
            return None

    def _name_value(self, name: str, extra: dict[str, Any] | None) -> int | float | None:
        """:meth:`const_value` of an identifier ``name``, as the expression it reads as evaluates: a number
        ``extra`` gives as is, a name nothing resolves None, without building either."""
        try:
            if extra and name in extra:
                v = extra[name]
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    return v
                e: E.Expr = ("v", name)
            else:
                e = E.bounded(self.resolve_const(name))
                if e[0] == "x":
                    return None
            vals: dict[str, Any] = self._macro_map()
            return E.eval_scalar(e, {**vals, **extra} if extra else vals)
        except (E.Unknown, RecursionError):
            return None

    def array_decl(self, decl: Any, d: Any, space: str, type_text: str) -> ArrayDecl | None:
        """The array declarator ``d`` of declaration ``decl`` declares (``float a[N][M]``), sized with
        this scope's constants; None when ``d`` declares no array."""
        inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        name = _declarator_name(d)
        if name is None or inner is None or inner.type != "array_declarator":
            return None
        shape = tuple(self._dim(s) for s in _array_dims(inner))
        return ArrayDecl(name, space, strip_type(type_text), element_bytes(type_text), shape, _line(decl))

    def _dim(self, size_node: Any) -> int | None:
        if size_node is None:
            return None
        v = self.const_value(size_node)
        return int(v) if isinstance(v, (int, float)) and v >= 0 else None



#: value text -> (its expression, the names it resolved with what each gave): every scope of the
#: process reads the same macros (a unit's 357 cuBLAS macros, in each of its scopes), so a text's
#: expression is kept and reused where each of those names resolves the same (a text with a call
#: is not kept: the call runs in its scope). Bounded: cleared when full.
_VALUES: dict[str, tuple[E.Expr, tuple[tuple[str, E.Expr], ...]]] = {}
_VALUES_MAX = 8192


def _parse_value_text(text: str, scope: FileScope) -> E.Expr:
    """The expression a macro's (or a constant's) value text gives in ``scope``: as
    ``scope.expr`` would build it from the text parsed alone."""
    if not text.strip():
        return E.unknown("empty macro")
    kept = _VALUES.get(text)
    if kept is not None and all(scope.resolve_const(name) == got for name, got in kept[1]):
        return kept[0]
    tree = parse_tree(f"int __cudalens_v = ({text});".encode())
    for n in _iter(tree.root_node):
        if n.type == "init_declarator":
            value = n.child_by_field_name("value")
            if value is not None and not value.has_error:
                return _value_expr(text, value, scope)
    _keep(text, E.unknown("macro not an expression"), ())
    return E.unknown("macro not an expression")


def _keep(text: str, e: E.Expr, asked: tuple[tuple[str, E.Expr], ...]) -> None:
    if len(_VALUES) >= _VALUES_MAX:
        _VALUES.clear()
    _VALUES[text] = (e, asked)


def _value_expr(text: str, value: Any, scope: FileScope) -> E.Expr:
    """``scope.expr(value)``, kept in :data:`_VALUES` with the names it resolved when it ran no call."""
    asked: list[tuple[str, E.Expr]] = []
    called = False

    def resolve(name: str) -> E.Expr:
        got = scope.resolve_const(name)
        asked.append((name, got))
        return got

    def on_call(node: Any) -> E.Expr:
        nonlocal called
        called = True
        return scope._pure_call(node)

    e = E.from_node(value, resolve, on_call=on_call)
    if not called:
        _keep(text, e, tuple(asked))
    return e


def _iter(node: Any):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))


def _file_declarations(root: Any):
    """Declarations at file (or namespace) level."""
    stack = [root]
    while stack:
        n = stack.pop()
        for c in n.named_children:
            if c.type == "declaration":
                yield c
            elif c.type in ("namespace_definition", "linkage_specification", "declaration_list", "preproc_if",
                            "preproc_ifdef", "preproc_else", "preproc_elif"):
                stack.append(c)


#: the largest launch dimension CUDA accepts (gridDim.x); any other value is not a launch size
