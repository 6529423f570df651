"""Host code for the kernel walk: the values a host function gives a launch's grid and block
(literals, ``dim3`` variables, constants of the file), :class:`HostEnv`."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from typing import Any

from cudalens.source import expr as E
from cudalens.source.host_loops import exit_loop, run_exit
from cudalens.source.scope import FileScope, _declarator_name, _iter, _line, _parse_value_text, _text

_MAX_DIM = 2**31 - 1


def _launch_dim(v: Any) -> int | None:
    """A launch dimension as an int when ``v`` is one a launch can have (1 .. 2**31-1), else None:
    zero, negative, fractional, infinite or oversized values are not derivable launch sizes."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float) and not (v.is_integer() and 1 <= v <= _MAX_DIM):
        return None
    return int(v) if 1 <= v <= _MAX_DIM else None


def _dim3(values: Iterable[int | None]) -> tuple[int, int, int] | None:
    """Up to three launch dimensions padded with 1 (dim3's defaults); None when one is not derivable
    (the values after it are not computed)."""
    out: list[int] = []
    for v in values:
        if v is None:
            return None
        out.append(v)
    out += [1] * (3 - len(out))
    return (out[0], out[1], out[2])


def _argv_names(body: Any) -> set[str]:
    """``argv`` and the name ``main``'s second parameter has (``char **v``)."""
    names = {"argv"}
    fn = body.parent if body is not None else None
    decl = fn.child_by_field_name("declarator") if fn is not None else None
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    if decl is not None and _text(decl.child_by_field_name("declarator")) == "main":
        plist = decl.child_by_field_name("parameters")
        params = [p for p in plist.named_children if p.type == "parameter_declaration"] if plist is not None else []
        if len(params) >= 2:
            d = params[1].child_by_field_name("declarator")
            name = _declarator_name(d) if d is not None else None
            if name:
                names.add(name)
    return names


def _within(node: Any, parents: set[Any]) -> bool:
    cur = node
    while cur is not None:
        if cur in parents:
            return True
        cur = cur.parent
    return False


def _guard(value: Any) -> tuple[Any, bool] | None:
    """(condition, on the `then` side) of the innermost ``if`` around a definition's value, within
    its function (a loop between them: None, the loop's own rules apply)."""
    cur = value
    while cur is not None and cur.parent is not None:
        parent = cur.parent
        if parent.type in ("function_definition", "for_statement", "while_statement", "do_statement"):
            return None
        if parent.type == "if_statement":
            cond = parent.child_by_field_name("condition")
            if cond is not None and cond.type == "condition_clause":
                cond = cond.child_by_field_name("value") or (cond.named_children[0] if cond.named_children else None)
            then = parent.child_by_field_name("consequence")
            if cond is None or cur == parent.child_by_field_name("condition"):
                return None
            return cond, then is not None and cur == then
        cur = parent
    return None


#: the node kinds HostEnv reads definitions and updates from
_READ = frozenset(("update_expression", "assignment_expression", "pointer_expression", "declaration"))
#: the node kinds HostEnv reads of its body: loops, and the kinds of _READ
KINDS = ("for_statement", *sorted(_READ))


class HostEnv:
    """Constant integers and ``dim3`` locals of one host function, to size launch configurations."""

    def __init__(self, scope: FileScope, body: Any, nodes: list[Any] | None = None) -> None:
        """``nodes``: the named nodes of ``body`` in preorder, where the caller has them already: every
        one, or those of :data:`KINDS` (the only ones read)."""
        self.scope = scope
        self.ints: list[tuple[int, str, Any]] = []  # (line, name, value)
        self.dim3s: list[tuple[int, str, tuple[int, int, int] | None]] = []
        # Names whose value changes in ways a single pass by line order cannot follow: compound
        # assignments (n *= 2), ++/--, a taken address (scanf("%d", &n)), or more than one definition.
        self.unsettled: set[str] = set()
        self.assigned_members: set[str] = set()  # `grid.x = ...` after `dim3 grid;`: the declaration is not the value
        self.members: list[tuple[int, str, str, Any]] = []  # (line, dim3 name, x/y/z, value) of those assignments
        self._evaluated: list[tuple[int, str, int | float | None]] | None = None
        self._before: dict[int, dict[str, Any]] = {}  # line -> the values there (_values_before)
        self._counts: dict[str, int] | None = None  # name -> its definitions (_definitions)
        # Names set from the program's input (argv): name -> "argv[1]". Their value is the
        # program's default where it has one (`argc > 1 ? atoi(argv[1]) : 1024`, or `int n = 1024;`
        # then `if (argc > 1) n = atoi(argv[1]);`); :meth:`inputs` names what a value depends on.
        self.tainted: dict[str, str] = {}
        self._argv = _argv_names(body)
        # a definition inside an `if` (by its value node's id): the condition, and whether it is the `then` side
        self.guards: dict[int, tuple[Any, bool]] = {}
        self.fixed_values: dict[str, int | float] = {}  # one iteration of the loops around a launch (fixed())
        self.since = 0
        self._inside: dict[int, dict[str, int]] = {}  # line -> the definitions in the loop iteration to it (_settled)
        self._prefix: HostEnv | None = None  # the environment whose timeline this one's is, before line `since`
        # expression node -> the identifiers it reads, in order (_identifiers): shared by the copies, which
        # read the same body
        self._ids: dict[Any, list[str]] = {}
        self._arrays: dict[tuple[str, Any], Any] = {}  # (name, function) -> host_loops._const_array's answer
        # loops whose stepped names' values after them follow from those before (host_loops.exit_loop):
        # their update clauses do not unsettle those names; a definition at the loop's end gives them
        steps: set[Any] = set()
        exits: list[tuple[int, str, Any]] = []
        loops: list[Any] = []
        read: list[tuple[Any, str]] = []  # (node, its type) of the kinds read below, in preorder
        for n in (_iter(body) if nodes is None else nodes):
            t = n.type
            if t == "for_statement":
                loops.append(n)
            elif t in _READ:
                read.append((n, t))
        for n in loops:
            names = exit_loop(n)
            if names:
                steps.add(n.child_by_field_name("update"))
                exits += [(int(n.end_point[0]) + 1, name, ("loop", n)) for name in names]
        self.exits = {name for _ln, name, _v in exits}
        for n, t in read:
            if t in ("update_expression", "assignment_expression") and steps and _within(n, steps):
                continue
            if t == "assignment_expression":
                left = n.child_by_field_name("left")
                base = left.child_by_field_name("argument") if left is not None and left.type == "field_expression" else None
                if base is not None and base.type == "identifier":
                    self.assigned_members.add(_text(base))
                    field = left.child_by_field_name("field") if left is not None else None
                    if field is not None and _text(n.child_by_field_name("operator")) == "=":
                        self.members.append((_line(n), _text(base), _text(field), n.child_by_field_name("right")))
            if t == "update_expression":
                arg = n.child_by_field_name("argument")
                if arg is not None and arg.type == "identifier":
                    self.unsettled.add(_text(arg))
            elif t == "assignment_expression" and _text(n.child_by_field_name("operator")) != "=":
                left = n.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    self.unsettled.add(_text(left))
            elif t == "pointer_expression" and _text(n.child_by_field_name("operator")) == "&" and (
                    n.parent is None or n.parent.type != "initializer_list"):  # `void *args[] = {&n}` reads n
                arg = n.child_by_field_name("argument")
                if arg is not None and arg.type == "identifier":
                    self.unsettled.add(_text(arg))
            if t == "declaration":
                tnode = n.child_by_field_name("type")
                tname = _text(tnode) if tnode is not None else ""
                for d in n.children_by_field_name("declarator"):
                    name = _declarator_name(d)
                    if name is None:
                        continue
                    if tname == "dim3":
                        self.dim3s.append((_line(n), name, self._dim3_from_decl(d)))
                    elif d.type == "init_declarator":
                        self._define(_line(n), name, d.child_by_field_name("value"))
            elif t == "assignment_expression" and _text(n.child_by_field_name("operator")) == "=":
                left = n.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    self._define(_line(n), _text(left), n.child_by_field_name("right"))
        self.ints += exits
        self._spread_taint()

    def _argv_ref(self, node: Any) -> str | None:
        """``argv[1]`` when ``node`` reads the program's arguments, else None."""
        if node is None or not self._argv:
            return None
        for x in _iter(node):
            if x.type == "subscript_expression":
                arg = x.child_by_field_name("argument")
                if arg is not None and _text(arg) in self._argv:
                    return "".join(_text(x).split())
            if x.type == "identifier" and _text(x) in self._argv:
                return "argv"
        return None

    def _define(self, line: int, name: str, value: Any) -> None:
        ref = self._argv_ref(value)
        if ref is None:
            self.ints.append((line, name, value))
            guard = _guard(value)
            if guard is not None:
                self.guards[id(value)] = guard
            return
        self.tainted[name] = ref
        if value is not None and value.type == "conditional_expression":  # argc > 1 ? atoi(argv[1]) : 1024
            for part in ("consequence", "alternative"):
                branch = value.child_by_field_name(part)
                if branch is not None and self._argv_ref(branch) is None:
                    self.ints.append((line, name, branch))
                    return
        # otherwise (`n = atoi(argv[1])`) the value before it, if any, is the program's default

    def _spread_taint(self) -> None:
        for _ in range(8):
            grew = False
            for _ln, name, node in self.ints:
                if name in self.tainted or node is None or isinstance(node, tuple):
                    continue
                ref = next((self.tainted[x] for x in self._identifiers(node) if x in self.tainted), None)
                if ref is not None:
                    self.tainted[name] = ref
                    grew = True
            if not grew:
                break

    def inputs(self, node: Any) -> tuple[str, ...]:
        """The program inputs (``argv[1]``) the value of ``node`` depends on, through host variables
        and ``dim3`` locals."""
        out: list[str] = []
        for name in self._identifiers(node):
            if name in self.tainted:
                out.append(self.tainted[name])
            for _ln, dname, spec in self.dim3s:
                if dname == name and isinstance(spec, tuple) and spec and spec[0] in ("pending", "texts"):
                    texts = [spec[1]] if spec[0] == "pending" else []
                    words = set(" ".join(spec[1]).replace("(", " ").replace(")", " ").split()) if spec[0] == "texts" else set()
                    out += [self.tainted[w] for w in words if w in self.tainted]
                    out += [r for t in texts if t is not None for r in self.inputs(t)]
        return tuple(dict.fromkeys(out))

    def _settled(self, node: Any, line: int) -> Any:
        """The value of an expression at ``line`` (a launch argument, the condition of an ``if`` around a
        launch), or None where it does not follow from the source.

        A number literal, an expression of ``#define``s and file-level constants, or of host locals
        defined exactly once before the launch (``int n = 1 << 20;``). A local that is redefined,
        incremented, updated in place or whose address is taken is not followed: its value at the
        launch depends on control flow (a loop counter, a value read at run time).
        """
        names = self._identifiers(node)
        defs = self._definitions()
        fixed = self.fixed_values
        inside = self._inside_to(line) if fixed else {}
        if any(name not in fixed and (name in self.unsettled or inside.get(name, defs.get(name, 0)) > 1)
               for name in names):
            return None
        return self.scope.const_value(node, self._before_at(line))

    def _identifiers(self, node: Any) -> list[str]:
        """The identifiers ``node`` reads, in order (repeats kept), read once per node."""
        got = self._ids.get(node)
        if got is None:
            got = self._ids[node] = [_text(x) for x in _iter(node) if x.type == "identifier"]
        return got

    def _inside_to(self, line: int) -> dict[str, int]:
        """In one loop iteration (:meth:`fixed`): how many times each name is defined inside the loop
        up to ``line``; counted once per line."""
        got = self._inside.get(line)
        if got is None:
            got = self._inside[line] = {}
            for ln, name, v in self.ints:
                if not isinstance(v, tuple) and self.since <= ln <= line:
                    got[name] = got.get(name, 0) + 1
        return got

    def _definitions(self) -> dict[str, int]:
        """How many times each name is defined (a loop's exit value, which follows from the definition
        before the loop, not counted); counted once."""
        if self._counts is None:
            counts: dict[str, int] = {}
            for _ln, name, v in self.ints:
                if not isinstance(v, tuple):
                    counts[name] = counts.get(name, 0) + 1
            self._counts = counts
        return self._counts

    def value(self, node: Any, line: int) -> int | float | None:
        """The number :meth:`_settled` gives (a truth value is not one)."""
        v = self._settled(node, line)
        return None if isinstance(v, bool) or not isinstance(v, (int, float)) else v

    def truth(self, node: Any, line: int) -> bool | None:
        """Whether the condition ``node`` holds at ``line``, where :meth:`_settled` decides it, else None."""
        v = self._settled(node, line)
        return bool(v) if isinstance(v, (bool, int, float)) else None

    def fixed(self, values: dict[str, int | float], since: int) -> HostEnv:
        """A copy for one iteration of the loops around a launch (:func:`cudalens.source.host_loops.
        loop_choices`): ``values`` hold wherever their names are defined, and host variables defined
        once inside the loop (from line ``since``) are followed even where defined elsewhere too."""
        out = copy.copy(self)
        out.fixed_values = dict(values)
        out.since = since
        out._evaluated = None
        out._before = {}  # the definition counts stay: they depend on the definitions alone
        out._inside = {}
        # before the loop (line ``since``) the copy's timeline is this one's, where this one fixes no value
        out._prefix = None if self.fixed_values else self
        return out

    def seed(self, values: dict[str, int | float], inputs: dict[str, str] | None = None) -> None:
        """Values of the function's parameters, as its callers pass them (``inputs``: those a
        caller reads from argv, by parameter name)."""
        self.seeded = dict(values)
        self.tainted.update(inputs or {})
        self._spread_taint()
        self._evaluated = None
        self._before = {}
        self._prefix = None

    def seeded_copy(self, values: dict[str, int | float], inputs: dict[str, str] | None = None) -> HostEnv:
        """A copy seeded with ``values`` (:meth:`seed`; this environment unchanged): the body is read once
        for all the tuples its callers pass."""
        out = copy.copy(self)
        out.tainted = dict(self.tainted)
        out.seed(values, inputs)
        return out

    def _values_before(self, line: int) -> dict[str, Any]:
        """The known values of the host variables at ``line`` (a new dict; worked out once per line)."""
        return dict(self._before_at(line))

    def _before_at(self, line: int) -> dict[str, Any]:
        """:meth:`_values_before` kept, not copied: not to be changed."""
        got = self._before.get(line)
        if got is None:
            got = dict(getattr(self, "seeded", {}))
            for ln, name, v in self._timeline():
                if ln > line:
                    break
                if v is None:
                    got.pop(name, None)
                else:
                    got[name] = v
            self._before[line] = got
        return got

    def _timeline(self) -> list[tuple[int, str, int | float | None]]:
        """Each definition's value in line order, evaluated once (each from those before it): a
        launch reads a prefix, so a host function with thousands of assignments stays linear."""
        if self._evaluated is None:
            vals: dict[str, Any] = dict(getattr(self, "seeded", {}))
            out: list[tuple[int, str, int | float | None]] = []
            exits: dict[int, dict[str, int | float] | None] = {}
            pending = dict(self.fixed_values)  # one loop iteration's values: they hold from the loop on
            items = [*sorted(self.ints, key=lambda x: x[0]), (1 << 62, "", None)]
            if self._prefix is not None:  # (fixed) the definitions before the loop: the prefix's, as evaluated
                out = [e for e in self._prefix._timeline() if e[0] < self.since]
                vals = self._prefix._values_before(self.since - 1)
                items = [x for x in items if x[0] >= self.since]
            for ln, name, node in items:
                if pending and ln >= self.since:
                    vals.update(pending)
                    out += [(self.since, n, v) for n, v in pending.items()]
                    pending = {}
                if node is None:
                    continue
                if isinstance(node, tuple):  # ("loop", for_statement): its stepped names after it
                    if id(node[1]) not in exits:  # every stepped name from the values before the loop
                        exits[id(node[1])] = run_exit(node[1], self.scope, vals)
                    after = exits[id(node[1])]
                    v = after.get(name) if after is not None else None
                    if v is None:
                        vals.pop(name, None)
                    else:
                        vals[name] = v
                    out.append((ln, name, v))
                    continue
                guard = self.guards.get(id(node))
                if guard is not None and not (name in self.fixed_values and ln >= self.since):
                    cond = self.scope.const_value(guard[0], vals)
                    if cond is not None and bool(cond) != guard[1]:
                        continue  # not taken with the values known here
                    if cond is None:  # taken or not: the value after it is not known
                        vals.pop(name, None)
                        out.append((ln, name, None))
                        continue
                v = self.fixed_values[name] if name in self.fixed_values and ln >= self.since else \
                    self.scope.const_value(node, vals)
                if v is None:
                    vals.pop(name, None)
                else:
                    vals[name] = v
                out.append((ln, name, v))
            self._evaluated = out
        return self._evaluated

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
        return _dim3(_launch_dim(self.scope.const_value(it, vals)) for it in items[:3])

    def _from_texts(self, texts: list[str], vals: dict[str, Any]) -> tuple[int, int, int] | None:
        allv = self.scope.macro_values()
        allv.update(vals)

        def dim(t: str) -> int | None:
            # host locals by value first: `dim3 b(bs, bs)` parses as a declaration whose
            # "parameters" are bare names, which the expression reader would not resolve
            t = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: repr(vals[m.group(0)]) if isinstance(
                vals.get(m.group(0)), (int, float)) and not isinstance(vals.get(m.group(0)), bool) else m.group(0), t)
            e = _parse_value_text(t, self.scope)
            e = E.substitute(e, {k: ("n", v) for k, v in vals.items() if isinstance(v, (int, float))})
            try:
                return _launch_dim(E.eval_scalar(e, allv))
            except E.Unknown:
                return None

        return _dim3(dim(t) for t in texts[:3])

    def _by_members(self, name: str, decl: tuple[int, str, Any], line: int) -> tuple[int, int, int] | None:
        """A ``dim3`` declared without a value and set member by member before ``line`` (``threads.x
        = NUMBER_THREADS; threads.y = 1;``), each member set at most once; None otherwise."""
        if decl[2] != (1, 1, 1):
            return None
        dims = {"x": 1, "y": 1, "z": 1}
        sets = [(ln, f, v) for ln, n, f, v in self.members if n == name and decl[0] <= ln <= line]
        if any(f not in dims for _ln, f, _v in sets) or len({f for _ln, f, _v in sets}) < len(sets):
            return None
        for ln, f, v in sets:
            got = _launch_dim(self.scope.const_value(v, self._values_before(ln)))
            if got is None:
                return None
            dims[f] = got
        return (dims["x"], dims["y"], dims["z"])

    def dims(self, node: Any, line: int) -> tuple[int, int, int] | None:
        """The (x, y, z) of a launch configuration argument, or None if not derivable."""
        vals = self._values_before(line)
        if node.type == "identifier":
            name = _text(node)
            found = [x for x in self.dim3s if x[1] == name and x[0] <= line]
            if found and name in self.assigned_members:
                return self._by_members(name, found[-1], line)
            if found:
                ln, _n, spec = found[-1]
                if isinstance(spec, tuple) and spec and spec[0] == "pending":
                    return self._tuple(spec[1], self._values_before(ln))
                if isinstance(spec, tuple) and spec and spec[0] == "texts":
                    return self._from_texts(spec[1], self._values_before(ln))
                return spec
        return self._tuple(node, vals)


