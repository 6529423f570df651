"""The accesses of the kernel walk: every subscript and dereference of a kernel pointer, a
``__shared__``, ``__constant__`` or local array becomes an :class:`~cudalens.source.model.Access`
(:class:`KernelAccesses`, the part of :class:`~cudalens.source.kernel_walk.KernelWalker` that
records them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cudalens.source import expr as E
from cudalens.source import syntax as syn
from cudalens.source.model import Access, ArrayDecl, Param
from cudalens.source.scope import _line, _text
from cudalens.source.types import element_bytes, strip_type

if TYPE_CHECKING:
    pass

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


class KernelAccesses:
    """Recording accesses; mixed into KernelWalker (which holds the state these methods read)."""

    # set by KernelWalker.__init__
    params: dict[str, Param]
    arrays: dict[str, ArrayDecl]
    accesses: list[Access]

    def expr(self, node: Any, st: _State) -> E.Expr:
        raise NotImplementedError  # KernelWalker.expr

    def _alias(self, value: Any, st: _State) -> tuple[str, E.Expr] | None:
        raise NotImplementedError  # KernelWalker._alias

    def _array_ref(self, name: str, offset: E.Expr, st: _State) -> tuple[str, E.Expr] | None:
        if name in st.ptrs:
            base, off = st.ptrs[name]
            return base, E.fold(("b", "+", off, offset))
        if (name in self.params and self.params[name].is_pointer) or name in self.arrays:
            return name, offset
        return None


    def _shared_view(self, decl: Any, name: str, value: Any) -> bool:
        """Whether pointer local ``name`` (declared by ``decl`` with initializer ``value``) views
        shared memory through a conversion operator or a cast, and if so record it as a shared array
        of the pointer's element type (no known shape, as ``extern __shared__ T x[]``):
        ``T *s = SharedMemory<T>();`` (cuda-samples' idiom: a struct whose body declares an
        ``extern __shared__`` array and converts to ``T *``), ``reinterpret_cast<float *>(raw)``,
        ``static_cast<...>(raw)`` or ``(float *)raw`` of a ``__shared__`` array."""
        v = value
        while v is not None and v.type == "parenthesized_expression":
            v = (v.named_children or [None])[-1]
        src = None
        if v is not None and v.type == "cast_expression":
            src = v.child_by_field_name("value")
        elif v is not None and v.type == "call_expression":
            fn = v.child_by_field_name("function")
            callee = _text(fn.child_by_field_name("name") if fn is not None and fn.type == "template_function" else fn)
            args = [a for a in (v.child_by_field_name("arguments") or v).named_children]
            if callee in ("reinterpret_cast", "static_cast") and len(args) == 1:
                src = args[0]
            elif args or callee not in self._shared_structs(decl):
                return False
        else:
            return False
        while src is not None and src.type == "parenthesized_expression":
            src = (src.named_children or [None])[-1]
        if src is not None:
            arr = self.arrays.get(_text(src)) if src.type == "identifier" else None
            if arr is None or arr.space != "shared":
                return False
        tnode = decl.child_by_field_name("type")
        etype = strip_type(_text(tnode)) if tnode is not None else ""
        self.arrays[name] = ArrayDecl(name, "shared", etype, element_bytes(etype) if etype else None, (None,), _line(decl))
        return True

    def _shared_structs(self, node: Any) -> frozenset[str]:
        """Names of the file's structs and classes whose body declares an ``extern __shared__`` array."""
        cached = getattr(self, "_shared_struct_names", None)
        if cached is None:
            root = node
            while root.parent is not None:
                root = root.parent
            cached = frozenset(_text(n.child_by_field_name("name")).split("<")[0].strip()
                               for n in syn.descendants(root, "struct_specifier", "class_specifier")
                               if n.child_by_field_name("name") is not None and "__shared__" in _text(n))
            self._shared_struct_names = cached
        return cached

    def _scan(self, node: Any, st: _State) -> None:
        """Record every array access in ``node`` (not descending into nested statements or lambdas)."""
        if node is None or not syn.descendants(node, "subscript_expression", "pointer_expression"):
            return  # (most statements hold neither: the walk below would find nothing)
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
                index = E.fold(("b", "+", E.fold(("b", "*", index, E.num(dim or 0))), e))  # dim: not None here
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
        if inner is None or syn.descendants(inner, "cast_expression", "call_expression", "update_expression",
                                            "assignment_expression"):
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



def _deref_index_text(inner: Any, walker: KernelAccesses, st: _State) -> str:
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


