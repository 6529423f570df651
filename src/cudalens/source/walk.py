"""Walk a kernel body in statement order, building index and condition expressions.

The walk is a small abstract interpreter over one path through the kernel:

- a local variable's definition is substituted into later expressions; a variable reassigned later
  uses its new value from there on (``i += s`` becomes ``old_i + s``);
- after an ``if``, a variable assigned in one arm becomes ``cond ? then : else``; after a loop,
  a variable assigned in the body becomes unknown (its value depends on the trip count);
- a loop's induction variable is a symbol ``name@line`` whose start and step the access model
  knows (it evaluates the first iteration, and the second one to see what changes);
- the conditions guarding a statement (enclosing ``if``s, an earlier ``if (...) return;``, a loop's
  condition) form its *mask*: the lanes that execute it;
- calls of small ``__device__`` helpers (declarations, assignments and one ``return``) are inlined;
  ``min``/``max``/``abs`` are understood; any other call or a loaded value is unknown.

Every ``x[...]`` on a kernel pointer parameter (or a pointer derived from one), a ``__shared__``,
``__constant__`` or local array becomes an :class:`~cudalens.source.model.Access` (load and/or store)
carrying its expressions; so does every dereference ``*(p + i)`` / ``*p`` of such a pointer (a
pointer local ``float *row = a + n * y`` is an alias: its accesses are accesses to ``a`` at the
summed index). Every ``if`` becomes a :class:`~cudalens.source.model.Branch`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cudalens.source import expr as E
from cudalens.source.limits import Budget, BudgetExceeded
from cudalens.source.model import Access, ArrayDecl, Branch, Param
from cudalens.source.types import element_bytes, strip_type

_MAX_INLINE_DEPTH = 4
_SPACE_QUALS = (("__shared__", "shared"), ("__constant__", "constant"), ("__device__", "global"),
                ("__managed__", "global"))


def _line(n: Any) -> int:
    return n.start_point[0] + 1


def _text(n: Any) -> str:
    return E.node_text(n)


def _declarator_name(d: Any) -> str | None:
    cur = d
    while cur is not None:
        if cur.type in ("identifier", "field_identifier"):
            return _text(cur)
        nxt = cur.child_by_field_name("declarator")
        if nxt is None:
            ids = [c for c in cur.named_children if c.type == "identifier"]
            nxt = ids[0] if ids else None
        cur = nxt
    return None


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
                inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
                name = _declarator_name(d)
                if name is None:
                    continue
                if inner is not None and inner.type == "array_declarator":
                    shape = tuple(scope._dim(s) for s in _array_dims(inner))
                    scope.arrays[name] = ArrayDecl(name, space if space != "local" else "global", strip_type(type_text),
                                                   element_bytes(type_text), shape, _line(decl))
                elif d.type == "init_declarator" and is_const and "*" not in _text(inner):
                    scope.const_exprs[name] = scope.expr(d.child_by_field_name("value"))
        for fn, quals, _t, _tp in functions:
            if "__device__" in quals and "__global__" not in quals:
                from cudalens.source.parse import _function_declarator, _function_name, _params

                name = _function_name(fn)
                body = fn.child_by_field_name("body")
                if name and body is not None and _function_declarator(fn) is not None:
                    scope.helpers[name] = (tuple(p.name for p in _params(fn)), body)
        return scope

    # -- constants ---------------------------------------------------------------------------
    def define_expr(self, name: str) -> E.Expr:
        """A macro's value as an expression (its own macros left as symbols); unknown if unparsable."""
        if name not in self._define_cache:
            self._define_cache[name] = E.unknown(f"macro {name}")  # guards self-reference
            self._define_cache[name] = _parse_value_text(self.defines.get(name, ""), self)
        return self._define_cache[name]

    def resolve_const(self, name: str) -> E.Expr:
        if name in self.const_exprs:
            return self.const_exprs[name]
        if name in self.defines:
            return ("v", name)
        return E.unknown(f"name {name}")

    def expr(self, node: Any) -> E.Expr:
        return E.from_node(node, self.resolve_const, on_call=self._pure_call)

    def _pure_call(self, node: Any) -> E.Expr:
        name = _text(node.child_by_field_name("function"))
        args = node.child_by_field_name("arguments")
        if name in E.PURE_CALLS and args is not None:
            return ("f", name, tuple(self.expr(a) for a in args.named_children))
        return E.unknown(f"call {name}")

    def macro_values(self, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        """Values for every macro symbol: the file's ``#define``s, overridden by ``overrides``."""
        vals: dict[str, Any] = {name: self.define_expr(name) for name in self.defines}
        if overrides:
            vals.update(overrides)
        return vals

    def const_value(self, node: Any, extra: dict[str, Any] | None = None) -> int | float | None:
        try:
            vals = self.macro_values()
            if extra:
                vals.update(extra)

            def resolve(name: str) -> E.Expr:
                return ("v", name) if extra and name in extra else self.resolve_const(name)

            return E.eval_scalar(E.from_node(node, resolve, on_call=self._pure_call), vals)
        except (E.Unknown, RecursionError):
            return None

    def _dim(self, size_node: Any) -> int | None:
        if size_node is None:
            return None
        v = self.const_value(size_node)
        return int(v) if isinstance(v, (int, float)) and v >= 0 else None

    def host_env(self, body: Any) -> "HostEnv":
        return HostEnv(self, body)


def _parse_value_text(text: str, scope: FileScope) -> E.Expr:
    if not text.strip():
        return E.unknown("empty macro")
    from cudalens.source.parse import parse_tree

    tree = parse_tree(f"int __cudalens_v = ({text});".encode())
    for n in _iter(tree.root_node):
        if n.type == "init_declarator":
            value = n.child_by_field_name("value")
            if value is not None and not value.has_error:
                return scope.expr(value)
    return E.unknown("macro not an expression")


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
_MAX_DIM = 2**31 - 1


def _launch_dim(v: Any) -> int | None:
    """A launch dimension as an int when ``v`` is one a launch can have (1 .. 2**31-1), else None:
    zero, negative, fractional, infinite or oversized values are not derivable launch sizes."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float) and not (v.is_integer() and 1 <= v <= _MAX_DIM):
        return None
    return int(v) if 1 <= v <= _MAX_DIM else None


class HostEnv:
    """Constant integers and ``dim3`` locals of one host function, to size launch configurations."""

    def __init__(self, scope: FileScope, body: Any) -> None:
        self.scope = scope
        self.ints: list[tuple[int, str, Any]] = []  # (line, name, value)
        self.dim3s: list[tuple[int, str, tuple[int, int, int] | None]] = []
        # Names whose value changes in ways a single pass by line order cannot follow: compound
        # assignments (n *= 2), ++/--, a taken address (scanf("%d", &n)), or more than one definition.
        self.unsettled: set[str] = set()
        for n in _iter(body):
            if n.type == "update_expression":
                arg = n.child_by_field_name("argument")
                if arg is not None and arg.type == "identifier":
                    self.unsettled.add(_text(arg))
            elif n.type == "assignment_expression" and _text(n.child_by_field_name("operator")) != "=":
                left = n.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    self.unsettled.add(_text(left))
            elif n.type == "pointer_expression" and _text(n.child_by_field_name("operator")) == "&":
                arg = n.child_by_field_name("argument")
                if arg is not None and arg.type == "identifier":
                    self.unsettled.add(_text(arg))
            if n.type == "declaration":
                t = n.child_by_field_name("type")
                tname = _text(t) if t is not None else ""
                for d in n.children_by_field_name("declarator"):
                    name = _declarator_name(d)
                    if name is None:
                        continue
                    if tname == "dim3":
                        self.dim3s.append((_line(n), name, self._dim3_from_decl(d)))
                    elif d.type == "init_declarator":
                        self.ints.append((_line(n), name, d.child_by_field_name("value")))
            elif n.type == "assignment_expression" and _text(n.child_by_field_name("operator")) == "=":
                left = n.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    self.ints.append((_line(n), _text(left), n.child_by_field_name("right")))

    def value(self, node: Any, line: int) -> int | float | None:
        """The value of a launch argument at ``line``, or None where it does not follow from the source.

        A number literal, an expression of ``#define``s and file-level constants, or of host locals
        defined exactly once before the launch (``int n = 1 << 20;``). A local that is redefined,
        incremented, updated in place or whose address is taken is not followed: its value at the
        launch depends on control flow (a loop counter, a value read at run time).
        """
        names = {_text(x) for x in _iter(node) if x.type == "identifier"}
        defs: dict[str, int] = {}
        for _ln, name, _v in self.ints:
            defs[name] = defs.get(name, 0) + 1
        if any(name in self.unsettled or defs.get(name, 0) > 1 for name in names):
            return None
        v = self.scope.const_value(node, self._values_before(line))
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        return v

    def _values_before(self, line: int) -> dict[str, Any]:
        vals: dict[str, Any] = {}
        for ln, name, node in sorted(self.ints, key=lambda x: x[0]):
            if ln <= line and node is not None:
                v = self.scope.const_value(node, vals)
                if v is None:
                    vals.pop(name, None)
                else:
                    vals[name] = v
        return vals

    def _dim3_from_decl(self, d: Any) -> tuple[int, int, int] | None:
        if d.type == "function_declarator":  # `dim3 b(TILE, TILE)` parses like a function declaration
            plist = d.child_by_field_name("parameters")
            texts = [_text(p) for p in plist.named_children] if plist is not None else []
            return ("texts", texts)  # type: ignore[return-value]
        if d.type != "init_declarator":
            return (1, 1, 1)
        value = d.child_by_field_name("value")
        return ("pending", value)  # type: ignore[return-value]

    def _tuple(self, node: Any, vals: dict[str, Any]) -> tuple[int, int, int] | None:
        if node is None:
            return None
        if node.type in ("argument_list", "initializer_list"):
            items = node.named_children
        elif node.type == "call_expression" and _text(node.child_by_field_name("function")) == "dim3":
            args = node.child_by_field_name("arguments")
            items = args.named_children if args is not None else []
        elif node.type == "compound_literal_expression":
            return self._tuple(node.child_by_field_name("value"), vals)
        else:
            items = [node]
        out = []
        for it in items[:3]:
            v = _launch_dim(self.scope.const_value(it, vals))
            if v is None:
                return None
            out.append(v)
        while len(out) < 3:
            out.append(1)
        return (out[0], out[1], out[2])

    def _from_texts(self, texts: list[str], vals: dict[str, Any]) -> tuple[int, int, int] | None:
        out = []
        allv = self.scope.macro_values()
        allv.update(vals)
        for t in texts[:3]:
            e = _parse_value_text(t, self.scope)
            e = E.substitute(e, {k: ("n", v) for k, v in vals.items() if isinstance(v, (int, float))})
            try:
                v = _launch_dim(E.eval_scalar(e, allv))
            except E.Unknown:
                return None
            if v is None:
                return None
            out.append(v)
        while len(out) < 3:
            out.append(1)
        return (out[0], out[1], out[2])

    def dims(self, node: Any, line: int) -> tuple[int, int, int] | None:
        """The (x, y, z) of a launch configuration argument, or None if not derivable."""
        vals = self._values_before(line)
        if node.type == "identifier":
            name = _text(node)
            found = [x for x in self.dim3s if x[1] == name and x[0] <= line]
            if found:
                ln, _n, spec = found[-1]
                if isinstance(spec, tuple) and spec and spec[0] == "pending":
                    return self._tuple(spec[1], self._values_before(ln))
                if isinstance(spec, tuple) and spec and spec[0] == "texts":
                    return self._from_texts(spec[1], self._values_before(ln))
                return spec
        return self._tuple(node, vals)


# --------------------------------------------------------------------------------------------
# The kernel walk


@dataclass
class _State:
    env: dict[str, E.Expr]
    ptrs: dict[str, tuple[str, E.Expr]]  # pointer local -> (array it points into, element offset)
    mask: E.Expr | None
    loops: tuple[tuple[str, E.Expr, E.Expr, int], ...]

    def copy(self) -> "_State":
        return _State(dict(self.env), dict(self.ptrs), self.mask, self.loops)


def _and(mask: E.Expr | None, cond: E.Expr) -> E.Expr:
    return cond if mask is None else ("b", "&&", mask, cond)


class KernelWalker:
    def __init__(self, params: tuple[Param, ...], tparams: tuple[str, ...], scope: FileScope, body: Any) -> None:
        self.scope = scope
        self.params = {p.name: p for p in params}
        self.tparams = set(tparams)
        self.arrays: dict[str, ArrayDecl] = {}
        self.accesses: list[Access] = []
        self.branches: list[Branch] = []
        self.problems: list[str] = []
        self.body = body
        self._depth = 0
        self._used = {_text(n) for n in _iter(body) if n.type == "identifier"}
        for name, arr in scope.arrays.items():
            if name in self._used:
                self.arrays[name] = arr

    # -- names -------------------------------------------------------------------------------
    def resolver(self, st: _State):
        def resolve(name: str) -> E.Expr:
            if name in st.env:
                return st.env[name]
            if name in self.params and not self.params[name].is_pointer:
                return ("v", name)
            if name in self.tparams:
                return ("v", name)
            return self.scope.resolve_const(name)

        return resolve

    def expr(self, node: Any, st: _State) -> E.Expr:
        return E.from_node(node, self.resolver(st), on_subscript=lambda n: self._load_value(n, st),
                           on_call=lambda n: self._call_value(n, st))

    def _load_value(self, node: Any, st: _State) -> E.Expr:
        base, _idx = _subscript_chain(node)
        return E.unknown(f"load {_text(base)}")

    def _call_value(self, node: Any, st: _State) -> E.Expr:
        fnode = node.child_by_field_name("function")
        name = _text(fnode)
        args = node.child_by_field_name("arguments")
        arg_nodes = [a for a in (args.named_children if args is not None else []) if a.type != "comment"]
        if name in E.PURE_CALLS:
            return ("f", name, tuple(self.expr(a, st) for a in arg_nodes))
        helper = self.scope.helpers.get(name)
        if helper is not None and self._depth < _MAX_INLINE_DEPTH and len(helper[0]) == len(arg_nodes):
            pnames, body = helper
            inner = _State({p: self.expr(a, st) for p, a in zip(pnames, arg_nodes)}, {}, None, st.loops)
            self._depth += 1
            try:
                return self._inline(body, inner)
            finally:
                self._depth -= 1
        return E.unknown(f"call {name}")

    def _inline(self, body: Any, st: _State) -> E.Expr:
        """The value a small helper returns: declarations and assignments, then ``return expr;``."""
        for s in body.named_children:
            if s.type == "return_statement":
                vals = [c for c in s.named_children if c.type != "comment"]
                return self.expr(vals[0], st) if vals else E.unknown("void helper")
            if s.type == "declaration":
                self._declare_values(s, st)
            elif s.type == "expression_statement":
                self._assignments(s, st)
            elif s.type != "comment":
                return E.unknown("helper with control flow")
        return E.unknown("helper without return")

    # -- statements --------------------------------------------------------------------------
    def walk(self, node: Any, st: _State) -> bool:
        """Walk one statement; returns True when it always leaves the function (``return``)."""
        if self.scope.budget is not None:
            self.scope.budget.check()
        t = node.type
        if t == "compound_statement":
            for c in node.named_children:
                if self.walk(c, st):
                    return True
            return False
        if t == "declaration":
            self._declaration(node, st)
            return False
        if t == "expression_statement":
            self._scan(node, st)
            self._assignments(node, st)
            return False
        if t == "if_statement":
            return self._if(node, st)
        if t == "for_statement":
            self._for(node, st)
            return False
        if t in ("while_statement", "do_statement"):
            self._while(node, st)
            return False
        if t == "return_statement":
            self._scan(node, st)
            return True
        if t in ("switch_statement", "case_statement", "labeled_statement"):
            for c in node.named_children:
                if c.type.endswith("statement") or c.type == "declaration":
                    inner = st.copy()
                    self.walk(c, inner)
                else:
                    self._scan(c, st)
            return False
        if t in ("comment", "break_statement", "continue_statement", "goto_statement"):
            return False
        self._scan(node, st)
        return False

    def _declaration(self, node: Any, st: _State) -> None:
        space = _space_of_declaration(node)
        tnode = node.child_by_field_name("type")
        type_text = _text(tnode) if tnode is not None else ""
        for d in node.children_by_field_name("declarator"):
            inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            name = _declarator_name(d)
            if name is None:
                continue
            if inner is not None and inner.type == "array_declarator":
                dims = _array_dims(inner)
                shape = tuple(self.scope._dim(s) if s is not None else None for s in dims)
                self.arrays[name] = ArrayDecl(name, space, strip_type(type_text), element_bytes(type_text), shape,
                                              _line(node))
                st.env.pop(name, None)
                continue
        self._scan(node, st)
        self._declare_values(node, st)

    def _declare_values(self, node: Any, st: _State) -> None:
        for d in node.children_by_field_name("declarator"):
            name = _declarator_name(d)
            if name is None:
                continue
            inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            if inner is not None and inner.type == "array_declarator":
                continue
            value = d.child_by_field_name("value") if d.type == "init_declarator" else None
            if inner is not None and inner.type in ("pointer_declarator", "reference_declarator"):
                alias = self._alias(value, st) if value is not None else None
                if alias is not None:
                    st.ptrs[name] = alias
                else:
                    st.ptrs.pop(name, None)
                st.env.pop(name, None)
                continue
            if value is not None and value.type in ("argument_list", "initializer_list"):
                items = value.named_children
                value = items[0] if len(items) == 1 else None
            st.env[name] = self.expr(value, st) if value is not None else E.unknown(f"uninitialized {name}")

    def _alias(self, value: Any, st: _State) -> tuple[str, E.Expr] | None:
        """``a + off``, ``&a[i]``, ``a`` for a pointer parameter/alias/array ``a`` -> (array, offset)."""
        v = value
        while v is not None and v.type in ("parenthesized_expression", "cast_expression"):
            v = v.child_by_field_name("value") if v.type == "cast_expression" else (v.named_children or [None])[-1]
        if v is None:
            return None
        if v.type == "identifier":
            return self._array_ref(_text(v), E.num(0), st)
        if v.type == "pointer_expression" and _text(v.child_by_field_name("operator")) == "&":
            arg = v.child_by_field_name("argument")
            if arg is not None and arg.type == "subscript_expression":
                base, idx = _subscript_chain(arg)
                if base.type == "identifier" and len(idx) == 1:
                    return self._array_ref(_text(base), self.expr(idx[0], st), st)
            return None
        if v.type == "binary_expression" and _text(v.child_by_field_name("operator")) in ("+", "-"):
            left, right = v.child_by_field_name("left"), v.child_by_field_name("right")
            op = _text(v.child_by_field_name("operator"))
            for p, off, sign in ((left, right, op), (right, left, "+")):
                if p is None or (p is right and op == "-"):
                    continue
                if p.type == "identifier":
                    ref = self._array_ref(_text(p), E.num(0), st)
                elif p.type in ("binary_expression", "parenthesized_expression"):
                    ref = self._alias(p, st)  # (row + k) + threadIdx.x
                else:
                    ref = None
                if ref is not None:
                    o = self.expr(off, st)
                    return ref[0], E.fold(("b", "+", ref[1], o if sign == "+" else ("u", "-", o)))
        return None

    def _array_ref(self, name: str, offset: E.Expr, st: _State) -> tuple[str, E.Expr] | None:
        if name in st.ptrs:
            base, off = st.ptrs[name]
            return base, E.fold(("b", "+", off, offset))
        if (name in self.params and self.params[name].is_pointer) or name in self.arrays:
            return name, offset
        return None

    def _assignments(self, node: Any, st: _State) -> None:
        for n in _top_level_effects(node):
            if n.type == "assignment_expression":
                left = n.child_by_field_name("left")
                if left is None or left.type != "identifier":
                    continue
                name = _text(left)
                op = _text(n.child_by_field_name("operator"))
                right = n.child_by_field_name("right")
                if name in st.ptrs or (name in self.params and self.params[name].is_pointer):
                    if op == "=":
                        alias = self._alias(right, st)
                    elif op in ("+=", "-=") and self._array_ref(name, E.num(0), st) is not None:
                        base, off = self._array_ref(name, E.num(0), st)  # type: ignore[misc]
                        r = self.expr(right, st)
                        alias = (base, E.fold(("b", op[0], off, r)))
                    else:
                        alias = None
                    if alias is not None:
                        st.ptrs[name] = alias
                    else:
                        st.ptrs.pop(name, None)
                    continue
                value = self.expr(right, st)
                if op == "=":
                    st.env[name] = value
                elif op[:-1] in ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"):
                    old = self.resolver(st)(name)
                    st.env[name] = E.fold(("b", op[:-1], old, value))
                else:
                    st.env[name] = E.unknown(f"assignment {op}")
            elif n.type == "update_expression":
                arg = n.child_by_field_name("argument")
                if arg is None or arg.type != "identifier":
                    continue
                name = _text(arg)
                delta = 1 if "++" in _text(n) else -1
                if name in st.ptrs:
                    base, off = st.ptrs[name]
                    st.ptrs[name] = (base, E.fold(("b", "+", off, E.num(delta))))
                    continue
                st.env[name] = E.fold(("b", "+", self.resolver(st)(name), E.num(delta)))

    def _if(self, node: Any, st: _State) -> bool:
        cnode = node.child_by_field_name("condition")
        if cnode is not None and cnode.type == "condition_clause":
            inner = cnode.child_by_field_name("value") or (cnode.named_children or [None])[-1]
        else:
            inner = cnode
        self._scan(cnode, st)
        cond = self.expr(inner, st) if inner is not None else E.unknown("condition")
        self.branches.append(Branch(_line(node), _text(inner).strip(), None, tuple(x[3] for x in st.loops),
                                    condition_expr=cond, mask_expr=st.mask, loop_context=st.loops))
        then_st = st.copy()
        then_st.mask = _and(st.mask, cond)
        cons = node.child_by_field_name("consequence")
        then_returns = self.walk(cons, then_st) if cons is not None else False
        alt = node.child_by_field_name("alternative")
        else_st = st.copy()
        else_st.mask = _and(st.mask, ("u", "!", cond))
        else_returns = False
        if alt is not None:
            target = alt.named_children[0] if alt.type == "else_clause" and alt.named_children else alt
            else_returns = self.walk(target, else_st)
        if then_returns and else_returns:
            return True
        if then_returns:
            st.env, st.ptrs, st.mask = else_st.env, else_st.ptrs, else_st.mask
            return False
        if else_returns:
            st.env, st.ptrs, st.mask = then_st.env, then_st.ptrs, then_st.mask
            return False
        for name in set(then_st.env) | set(else_st.env):
            a = then_st.env.get(name, E.unknown(f"scope {name}"))
            b = else_st.env.get(name, E.unknown(f"scope {name}"))
            st.env[name] = a if a == b else ("t", cond, a, b)
        for name in set(then_st.ptrs) | set(else_st.ptrs):
            if then_st.ptrs.get(name) == else_st.ptrs.get(name):
                st.ptrs[name] = then_st.ptrs[name]
            else:
                st.ptrs.pop(name, None)
        return False

    def _for(self, node: Any, st: _State) -> None:
        init = node.child_by_field_name("initializer")
        inner = st.copy()
        var = None
        if init is not None:
            if init.type == "declaration":
                self._scan(init, inner)
                self._declare_values(init, inner)
                for d in init.children_by_field_name("declarator"):
                    var = _declarator_name(d)
                    break
            else:
                self._scan(init, inner)
                self._assignments(init, inner)
                if init.type == "assignment_expression":
                    left = init.child_by_field_name("left")
                    var = _text(left) if left is not None and left.type == "identifier" else None
        line = _line(node)
        if var is not None and var in inner.env:
            start = inner.env[var]
            step = self._step(node.child_by_field_name("update"), var, inner)
            sym = f"{var}@{line}"
            inner.env[var] = ("v", sym)
            inner.loops = inner.loops + ((sym, start, step, line),)
            trip: E.Expr | None = None
            if not E.unknowns(step) and not E.unknowns(start):
                trip = E.fold(("b", "-", ("v", sym), start))
                trip = trip if step == E.num(1) else E.fold(("b", "/", trip, step))
        else:
            sym = f"iteration@{line}"
            inner.loops = inner.loops + ((sym, E.num(0), E.num(1), line),)
            trip = ("v", sym)
        self._advanced_by_loop(node, var, trip, inner)
        cond_node = node.child_by_field_name("condition")
        if cond_node is not None:
            self._scan(cond_node, inner)
            cond = self.expr(cond_node, inner)
            if not E.unknowns(cond):
                inner.mask = _and(inner.mask, cond)
        body = node.child_by_field_name("body")
        before = dict(inner.env)
        if body is not None:
            self.walk(body, inner)
        upd = node.child_by_field_name("update")
        if upd is not None:
            self._scan(upd, inner)
        self._after_loop(st, before, inner, var)

    def _step(self, upd: Any, var: str, st: _State) -> E.Expr:
        if upd is None:
            return E.unknown("no update")
        probe = st.copy()
        probe.env[var] = ("v", "__cur")
        self._assignments(upd if upd.type != "comma_expression" else upd, probe) if upd.type in (
            "assignment_expression", "update_expression") else None
        new = probe.env.get(var)
        if new is None or new == ("v", "__cur"):
            return E.unknown("update")
        # step = new - cur, valid when new is cur + something without cur
        if new[0] == "b" and new[1] in ("+", "-") and new[2] == ("v", "__cur") and "__cur" not in E.symbols(new[3]):
            return new[3] if new[1] == "+" else E.fold(("u", "-", new[3]))
        return E.unknown("non-additive update")

    def _advanced_by_loop(self, loop: Any, var: str | None, trip: E.Expr | None, st: _State) -> None:
        """Variables and pointers a loop advances besides its counter: ``j += lda`` in the header's
        update, ``p += lda`` or ``idx += stride`` in the body. In iteration ``t`` such a value is its
        value at entry plus ``t`` times its step, so an access through it is not loop-invariant.
        Where the step is not one unconditional additive update (or ``trip``, the iteration number,
        is unknown), the value is unknown inside the loop (a pointer is no longer followed)."""
        effects: dict[str, list[Any]] = {}
        for part in (loop.child_by_field_name("body"), loop.child_by_field_name("update")):
            for n in _iter(part) if part is not None else ():
                if n.type == "assignment_expression":
                    target = n.child_by_field_name("left")
                elif n.type == "update_expression":
                    target = n.child_by_field_name("argument")
                else:
                    continue
                if target is not None and target.type == "identifier" and _text(target) != var:
                    effects.setdefault(_text(target), []).append(n)
        body = loop.child_by_field_name("body")
        for name, nodes in effects.items():
            if name not in st.env and name not in st.ptrs:
                continue
            step = self._effect_step(nodes[0], name, st, body) if trip is not None and len(nodes) == 1 else None
            if name in st.ptrs:
                base, off = st.ptrs[name]
                if step is None:
                    st.ptrs.pop(name, None)
                else:
                    st.ptrs[name] = (base, E.fold(("b", "+", off, E.fold(("b", "*", trip, step)))))
            elif step is None:
                st.env[name] = E.unknown(f"{name} changes in the loop")
            else:
                st.env[name] = E.fold(("b", "+", st.env[name], E.fold(("b", "*", trip, step))))

    def _effect_step(self, effect: Any, name: str, st: _State, body: Any) -> E.Expr | None:
        """What one ``+=``/``-=``/``++``/``--`` of ``name`` adds per iteration; None when it is
        conditional (under an ``if``, ``?:``, inner loop) or not additive."""
        p = effect.parent
        while p is not None and p is not body and p.type not in ("for_statement", "for_range_loop"):
            if p.type in ("if_statement", "conditional_expression", "while_statement", "do_statement",
                          "switch_statement", "lambda_expression"):
                return None
            p = p.parent
        probe = st.copy()
        if name in st.ptrs:
            probe.ptrs[name] = (st.ptrs[name][0], ("v", "__cur"))
        else:
            probe.env[name] = ("v", "__cur")
        self._assignments(effect, probe)
        new = probe.ptrs.get(name, (None, None))[1] if name in st.ptrs else probe.env.get(name)
        if (isinstance(new, tuple) and new[0] == "b" and new[1] in ("+", "-") and new[2] == ("v", "__cur")
                and "__cur" not in E.symbols(new[3]) and not E.unknowns(new[3])):
            return new[3] if new[1] == "+" else E.fold(("u", "-", new[3]))
        return None

    def _while(self, node: Any, st: _State) -> None:
        inner = st.copy()
        sym = f"iteration@{_line(node)}"
        inner.loops = inner.loops + ((sym, E.num(0), E.num(1), _line(node)),)
        self._advanced_by_loop(node, None, ("v", sym), inner)
        cnode = node.child_by_field_name("condition")
        if cnode is not None:
            self._scan(cnode, inner)
            value = cnode.child_by_field_name("value") if cnode.type == "condition_clause" else cnode
            cond = self.expr(value, inner) if value is not None else E.unknown("condition")
            if node.type == "while_statement" and not E.unknowns(cond):
                inner.mask = _and(inner.mask, cond)
        before = dict(inner.env)
        body = node.child_by_field_name("body")
        if body is not None:
            self.walk(body, inner)
        self._after_loop(st, before, inner, None)

    def _after_loop(self, st: _State, before: dict[str, E.Expr], inner: _State, var: str | None) -> None:
        for name, value in inner.env.items():
            if name == var:
                continue
            if name in st.env and before.get(name) != value:
                st.env[name] = E.unknown(f"{name} after loop")
        for name in list(st.ptrs):
            if inner.ptrs.get(name) != st.ptrs[name]:
                st.ptrs.pop(name, None)

    # -- accesses ----------------------------------------------------------------------------
    def _scan(self, node: Any, st: _State) -> None:
        """Record every array access in ``node`` (not descending into nested statements or lambdas)."""
        if node is None:
            return
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "subscript_expression":
                self._access(n, st)
                base, idx = _subscript_chain(n)
                stack.extend(reversed(idx))
                continue
            if n.type == "pointer_expression" and _text(n.child_by_field_name("operator")) == "*":
                self._deref(n, st)
            if n.type in ("lambda_expression", "compound_statement") and n is not node:
                continue
            stack.extend(reversed(n.named_children))

    def _access(self, node: Any, st: _State) -> None:
        base, idx_nodes = _subscript_chain(node)
        if base.type != "identifier":
            return
        name = _text(base)
        ref = self._array_ref(name, E.num(0), st)
        if ref is None:
            return
        array, offset = ref
        decl = self.arrays.get(array)
        if decl is not None:
            space, etype, nbytes = decl.space, decl.element_type, decl.element_bytes
            shape = decl.shape
        else:
            p = self.params.get(array)
            if p is None:
                return
            space, etype = "global", strip_type(p.type)
            nbytes = element_bytes(p.type)
            shape = (None,)
        idx_exprs = [self.expr(i, st) for i in idx_nodes]
        if len(idx_exprs) == 1:
            index = idx_exprs[0]
        elif len(idx_exprs) == len(shape) and all(s is not None for s in shape[1:]):
            index = idx_exprs[0]
            for dim, e in zip(shape[1:], idx_exprs[1:]):
                index = E.fold(("b", "+", E.fold(("b", "*", index, E.num(dim))), e))
        else:
            index = E.unknown("multi-dimensional subscript on a pointer")
        if name != array or offset != E.num(0):
            index = E.fold(("b", "+", offset, index))
        self._record(node, array, space, etype, nbytes, index, "][".join(_text(i) for i in idx_nodes), st)

    def _deref(self, node: Any, st: _State) -> None:
        """``*(p + e)``, ``*p``: an access to the array ``p`` points into, at ``p``'s offset plus ``e``.

        ``p`` is a pointer parameter, a pointer local derived from one (``float *row = a + n * y``),
        or a 1-D ``__shared__``/``__constant__``/local array. A cast inside the operand
        (``*(float4 *)(a + i)``) changes the element size and is not modelled, nor is a
        multi-dimensional array (``*(tile + i)`` is a row, not an element).
        """
        arg = node.child_by_field_name("argument")
        inner = arg
        while inner is not None and inner.type == "parenthesized_expression":
            inner = (inner.named_children or [None])[-1]
        if inner is None or any(n.type in ("cast_expression", "call_expression", "update_expression",
                                           "assignment_expression") for n in _iter(inner)):
            return
        ref = self._alias(inner, st)
        if ref is None:
            return
        array, index = ref
        decl = self.arrays.get(array)
        if decl is not None:
            if len(decl.shape) != 1:
                return
            space, etype, nbytes = decl.space, decl.element_type, decl.element_bytes
        else:
            p = self.params.get(array)
            if p is None:
                return
            space, etype, nbytes = "global", strip_type(p.type), element_bytes(p.type)
        self._record(node, array, space, etype, nbytes, index, _deref_index_text(inner, self, st), st)

    def _record(self, node: Any, array: str, space: str, etype: str | None, nbytes: int | None, index: E.Expr,
                index_text: str, st: _State) -> None:
        """Append the load and/or store that ``node`` (a subscript or a dereference) performs."""
        parent, child = node.parent, node
        while parent is not None and parent.type in ("field_expression", "parenthesized_expression"):
            child, parent = parent, parent.parent
            if nbytes is not None and child.type == "field_expression":
                nbytes = None if etype is None or element_bytes(etype) is None else nbytes
        ops: list[str]
        if parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("left") == child:
            ops = ["store"] if _text(parent.child_by_field_name("operator")) == "=" else ["load", "store"]
        elif parent is not None and parent.type == "update_expression":
            ops = ["load", "store"]
        elif parent is not None and parent.type == "pointer_expression" and _text(parent.child_by_field_name("operator")) == "&":
            return
        else:
            ops = ["load"]
        loop_lines = tuple(x[3] for x in st.loops)
        stored_to = self._stored_to(child, st) if space == "global" and ops == ["load"] else None
        for op in ops:
            self.accesses.append(Access(_line(node), array, space, op, nbytes, index_text,
                                        loop_lines=loop_lines, element_type=etype or None, index_expr=index,
                                        mask_expr=st.mask, loop_context=st.loops, stored_to=stored_to))

    def _stored_to(self, node: Any, st: _State) -> str | None:
        """The __shared__ array a loaded value is assigned to within one expression, if any.

        ``tile[ty][tx] = a[i];`` and ``tile[ty][tx] = s * a[i];`` stage ``a`` into ``tile``; a value
        that passes through a local variable first is not followed (None).
        """
        cur = node
        while cur.parent is not None:
            parent = cur.parent
            if parent.type == "assignment_expression":
                if parent.child_by_field_name("right") != cur:
                    return None
                left = parent.child_by_field_name("left")
                if left is None or left.type != "subscript_expression":
                    return None
                base, _idx = _subscript_chain(left)
                ref = self._array_ref(_text(base), E.num(0), st) if base.type == "identifier" else None
                decl = self.arrays.get(ref[0]) if ref is not None else None
                return decl.name if decl is not None and decl.space == "shared" else None
            if parent.type.endswith("statement") or parent.type in ("declaration", "init_declarator",
                                                                     "argument_list", "subscript_argument_list"):
                return None
            cur = parent
        return None


def _deref_index_text(inner: Any, walker: KernelWalker, st: _State) -> str:
    """The index of ``*(p + e)`` as written: ``e`` (``-(e)`` for ``p - e``), ``0`` for ``*p``, else the operand."""
    if inner.type == "identifier":
        return "0"
    if inner.type == "binary_expression":
        left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
        op = _text(inner.child_by_field_name("operator"))
        if left is not None and left.type == "identifier" and walker._array_ref(_text(left), E.num(0), st):
            return _text(right) if op == "+" else f"-({_text(right)})"
        if op == "+" and right is not None and right.type == "identifier" and walker._array_ref(_text(right), E.num(0), st):
            return _text(left)
        if left is not None and left.type in ("binary_expression", "parenthesized_expression") \
                and walker._alias(left, st) is not None:  # (p + i) + j
            head = _deref_index_text(left if left.type == "binary_expression" else left.named_children[-1], walker, st)
            return f"{head} {op} {_text(right)}" if head != "0" else (_text(right) if op == "+" else f"-({_text(right)})")
    return _text(inner)


def _subscript_chain(node: Any) -> tuple[Any, list[Any]]:
    """``a[i][j]`` -> (a, [i, j])."""
    idx = []
    cur = node
    while cur is not None and cur.type == "subscript_expression":
        ind = cur.child_by_field_name("indices") or cur.child_by_field_name("index")
        if ind is not None and ind.type == "subscript_argument_list":
            items = [c for c in ind.named_children if c.type != "comment"]
            idx.append(items[0] if items else ind)
        elif ind is not None:
            idx.append(ind)
        cur = cur.child_by_field_name("argument")
    return (cur if cur is not None else node), list(reversed(idx))


def _top_level_effects(node: Any):
    """Assignments and ++/-- in a statement, outermost first (not inside lambdas)."""
    stack = [node]
    out = []
    while stack:
        n = stack.pop()
        if n.type in ("assignment_expression", "update_expression"):
            out.append(n)
        if n.type in ("lambda_expression", "compound_statement") and n is not node:
            continue
        stack.extend(reversed(n.named_children))
    # inner effects (a = b = 0) happen first
    return list(reversed(out))


def walk_kernel(fn: Any, body: Any, params: tuple[Param, ...], tparams: tuple[str, ...], scope: FileScope):
    """Arrays, accesses, branches and problems of one kernel body."""
    walker = KernelWalker(params, tparams, scope, body)
    st = _State({}, {}, None, ())
    try:
        walker.walk(body, st)
    except RecursionError:
        walker.problems.append("unmodelled: nesting too deep; accesses after that point are missing")
    except BudgetExceeded as exc:
        walker.problems.append(f"unmodelled: the rest of the kernel ({exc.what})")
    return tuple(walker.arrays.values()), walker.accesses, walker.branches, walker.problems
