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

from typing import Any

from cudalens.source import expr as E
from cudalens.source import syntax as syn
from cudalens.source.kernel_access import KernelAccesses, _and, _State, _subscript_chain
from cudalens.source.limits import BudgetExceeded
from cudalens.source.model import Access, ArrayDecl, Branch, Param
from cudalens.source.scope import (
    _MAX_INLINE_DEPTH,
    FileScope,
    _declarator_name,
    _line,
    _space_of_declaration,
    _text,
)


class KernelWalker(KernelAccesses):
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
        self._used = set(syn.texts_within(body, syn.descendants(body, "identifier")))
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
            array = self.scope.array_decl(node, d, space, type_text)
            if array is not None:
                self.arrays[array.name] = array
                st.env.pop(array.name, None)
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
                alias = None if value is None or self._shared_view(node, name, value) else self._alias(value, st)
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
            # not a value counter: a pointer the header declares or assigns (``p = b; ...; p += n``)
            # is advanced like any other pointer, by the iteration number times its step
            var = None
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
            for n in syn.descendants(part, "assignment_expression", "update_expression"):
                target = n.child_by_field_name("left" if n.type == "assignment_expression" else "argument")
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
        if isinstance(new, tuple) and new[0] == "b" and new[2] == ("b", "+", ("v", "__cur"), E.num(0)):
            new = (*new[:2], ("v", "__cur"), new[3])  # a pointer's ``+=`` adds to its offset (cur + 0)
        if (isinstance(new, tuple) and new[0] == "b" and new[1] in ("+", "-") and new[2] == ("v", "__cur")
                and "__cur" not in E.symbols(new[3]) and not E.unknowns(new[3])):
            return new[3] if new[1] == "+" else E.fold(("u", "-", new[3]))
        return None

    def _while(self, node: Any, st: _State) -> None:
        if node.type == "do_statement" and _runs_once(node):
            body = node.child_by_field_name("body")  # ``do { ... } while (0)``: one pass, no loop
            if body is not None:
                self.walk(body, st)
            return
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


def _top_level_effects(node: Any):
    """Assignments and ++/-- in a statement, outermost first (not inside lambdas)."""
    if not syn.descendants(node, "assignment_expression", "update_expression"):
        return []  # (most statements hold none: the walk below would find nothing)
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


def _runs_once(node: Any) -> bool:
    """A ``do ... while`` whose condition is the literal 0 or ``false`` (the macro idiom): one pass."""
    cond = node.child_by_field_name("condition")
    text = _text(cond).strip() if cond is not None else ""
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    return text in ("0", "false", "0u", "0U")
