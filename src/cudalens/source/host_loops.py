"""Host loops that launch a kernel (or call a launching wrapper) once per value: the values each
iteration gives the names the launch reads, in program order (issue #26: every distinct launch).

Two forms, nested loops combined (at most :data:`MAX_CHOICES` combinations, the first ones):

- a loop over a constant array: ``int sizes[] = {32, 64}; for (int j = 0; j < N; j++) { int bs =
  sizes[j]; k<<<g, bs>>>(...); }`` (``N`` a number, or ``sizeof(sizes) / sizeof(int)``): ``j`` and
  ``bs`` take the array's values;
- a counted loop: ``for (int bs = 32; bs <= 1024; bs *= 2)`` (``++``, ``+=``, ``*=``, ``<<=``):
  ``bs`` takes its values.

A loop whose values are not all known from the source (a bound from ``argv``, a step of a variable)
gives none: the launch keeps the single value the host model finds, or none.
"""

from __future__ import annotations

import itertools
from typing import Any

from cudalens.source.scope import _declarator_name, _iter, _line, _text

MAX_CHOICES = 16
MAX_TRIPS = 64


def _enclosing_loops(node: Any) -> list[Any]:
    """The ``for`` statements around ``node`` inside its function, outermost first."""
    out = []
    cur = node.parent
    while cur is not None and cur.type != "function_definition":
        if cur.type == "for_statement":
            out.append(cur)
        cur = cur.parent
    return out[::-1]


def _const_array(name: str, fn: Any, env: Any) -> list[int | float] | None:
    """The values of array ``name`` declared with a constant initializer list in the function or file (they
    depend on the file's scope alone: found once per name and function for an environment and its copies)."""
    kept = env._arrays
    if (name, fn) not in kept:
        kept[name, fn] = _find_const_array(name, fn, env)
    return kept[name, fn]  # type: ignore[no-any-return]


def _find_const_array(name: str, fn: Any, env: Any) -> list[int | float] | None:
    root = fn
    while root.parent is not None:
        root = root.parent
    for where in (fn, root):
        for x in _iter(where):
            if x.type != "init_declarator":
                continue
            d = x.child_by_field_name("declarator")
            value = x.child_by_field_name("value")
            if d is None or d.type != "array_declarator" or _declarator_name(d) != name or value is None \
                    or value.type != "initializer_list":
                continue
            vals = [env.scope.const_value(item) for item in value.named_children if item.type != "comment"]
            if not vals or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in vals):
                return None
            return vals  # type: ignore[return-value]
    return None


def _sizeof_count(cond_right: Any, fn: Any, env: Any) -> int | None:
    """``sizeof(arr) / sizeof(T)`` (or ``sizeof arr / sizeof arr[0]``): the length of ``arr``."""
    text = "".join(_text(cond_right).split())
    if not text.startswith("sizeof(") or "/" not in text:
        return None
    name = text[len("sizeof("):].split(")", 1)[0]
    arr = _const_array(name, fn, env) if name.isidentifier() else None
    return len(arr) if arr is not None else None


def _loop_values(loop: Any, fn: Any, env: Any) -> tuple[str, list[int | float]] | None:
    """(loop variable, its values in order) of a counted ``for``, or None."""
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if init is None or cond is None or update is None:
        return None
    var = start = None
    if init.type == "declaration":
        ds = init.children_by_field_name("declarator")
        if len(ds) == 1 and ds[0].type == "init_declarator":
            var, start = _declarator_name(ds[0]), ds[0].child_by_field_name("value")
    elif init.type == "assignment_expression" and init.child_by_field_name("left") is not None:
        var, start = _text(init.child_by_field_name("left")), init.child_by_field_name("right")
    if not var or start is None or cond.type != "binary_expression":
        return None
    before = env._values_before(_line(loop) - 1)
    v0 = env.scope.const_value(start, before)
    left, op, right = cond.child_by_field_name("left"), _text(cond.child_by_field_name("operator")), \
        cond.child_by_field_name("right")
    if _text(left) != var or op not in ("<", "<=", "!=") or not isinstance(v0, (int, float)):
        return None
    bound = env.scope.const_value(right, before)
    if bound is None:
        bound = _sizeof_count(right, fn, env)
    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
        return None
    step = _step(update, var, env, before)
    if step is None:
        return None
    out: list[int | float] = []
    v = v0
    while (v < bound if op == "<" else v <= bound if op == "<=" else v != bound) and len(out) <= MAX_TRIPS:
        out.append(v)
        nxt = step(v)
        if nxt == v:
            return None
        v = nxt
    return (var, out) if 0 < len(out) <= MAX_TRIPS else None


def _step(update: Any, var: str, env: Any, before: dict[str, Any]) -> Any:
    if update.type == "update_expression":
        arg = update.child_by_field_name("argument")
        if _text(arg) != var:
            return None
        return (lambda v: v + 1) if "++" in _text(update) else (lambda v: v - 1)
    if update.type != "assignment_expression" or _text(update.child_by_field_name("left")) != var:
        return None
    by = env.scope.const_value(update.child_by_field_name("right"), before)
    if isinstance(by, bool) or not isinstance(by, (int, float)):
        return None
    op = _text(update.child_by_field_name("operator"))
    return {"+=": lambda v: v + by, "-=": lambda v: v - by, "*=": lambda v: v * by,
            "<<=": lambda v: int(v) << int(by)}.get(op)


def _array_reads(loop: Any, var: str, limit: int, fn: Any, env: Any) -> dict[str, list[int | float]]:
    """Names defined in ``loop``'s body before ``limit`` (a byte offset) from ``arr[var]``, ``arr`` a
    constant array: name -> the array."""
    out: dict[str, list[int | float]] = {}
    body = loop.child_by_field_name("body")
    for x in _iter(body) if body is not None else ():
        if x.start_byte >= limit:
            continue
        name = value = None
        if x.type == "init_declarator":
            name, value = _declarator_name(x.child_by_field_name("declarator")), x.child_by_field_name("value")
        elif x.type == "assignment_expression" and _text(x.child_by_field_name("operator")) == "=":
            name, value = _text(x.child_by_field_name("left")), x.child_by_field_name("right")
        if not name or value is None or value.type != "subscript_expression":
            continue
        arr, idx = value.child_by_field_name("argument"), value.child_by_field_name("indices") or \
            value.child_by_field_name("index")
        if arr is None or idx is None or "".join(_text(idx).strip("[]").split()) != var:
            continue
        vals = _const_array(_text(arr), fn, env)
        if vals is not None:
            out[name] = vals
    return out


Choice = tuple[dict[str, int | float], str, int]


def loop_choices(env: Any, node: Any) -> list[Choice]:
    """One (values, note, first line of the outermost loop used) per iteration combination of the
    loops around ``node`` that give names ``node`` reads their values (directly or through host
    variables defined before it), in program order; ``[({}, "", 0)]`` when there is none."""
    fn = node.parent
    while fn is not None and fn.type != "function_definition":
        fn = fn.parent
    if fn is None:
        return [({}, "", 0)]
    loops = _enclosing_loops(node)
    if not loops:
        return [({}, "", 0)]
    reads = _reads(env, node)
    per_loop: list[list[tuple[dict[str, int | float], str]]] = []
    since = 0
    for loop in loops:
        stepped = _stepped(loop, env, reads)
        if stepped:
            per_loop.append(stepped)
            since = since or _line(loop)
            continue
        got = _loop_values(loop, fn, env)
        if got is None:
            continue
        var, values = got
        arrays = _array_reads(loop, var, node.start_byte, fn, env)
        names = {var, *arrays} & reads
        if not names:
            continue
        its = []
        for i, v in enumerate(values):
            vals: dict[str, int | float] = {var: v}
            for name, arr in arrays.items():
                if isinstance(v, int) and 0 <= v < len(arr):
                    vals[name] = arr[v]
            shown = ", ".join(f"{n} = {vals[n]:g}" for n in sorted(names) if n in vals)
            its.append((vals, f"{shown} (iteration {i + 1} of {len(values)} of the loop at line {_line(loop)})"))
        per_loop.append(its)
        since = since or _line(loop)
    if not per_loop:
        return [({}, "", 0)]
    out = []
    for combo in itertools.islice(itertools.product(*per_loop), MAX_CHOICES):
        merged: dict[str, int | float] = {}
        for vals, _note in combo:
            merged.update(vals)
        out.append((merged, "; ".join(note for _v, note in combo), since))
    return out


def _stepped(loop: Any, env: Any, reads: set[str]) -> list[tuple[dict[str, int | float], str]]:
    """Per pass of a loop that steps names in its update clause (:func:`exit_loop`) and gives
    names the launch reads their values: those values (none: [])."""
    names = set(exit_loop(loop))
    if not names & reads:
        return []
    passes = run_passes(loop, env.scope, env._values_before(_line(loop) - 1))
    if not passes or len(passes) < 2:
        return []
    its = passes[:-1]
    return [(vals, ", ".join(f"{n} = {vals[n]:g}" for n in sorted(names & reads)) +
             f" (pass {i + 1} of {len(its)} of the loop at line {_line(loop)})") for i, vals in enumerate(its)]


def _reads(env: Any, node: Any) -> set[str]:
    """The identifiers ``node`` reads, and those the host definitions of them read (a fixed point)."""
    names = {_text(x) for x in _iter(node) if x.type == "identifier"}
    defs: dict[str, list[Any]] = {}
    for _ln, name, value in env.ints:
        if value is not None and not isinstance(value, tuple):
            defs.setdefault(name, []).append(value)
    for _ln, name, spec in env.dim3s:
        if isinstance(spec, tuple) and spec and spec[0] == "pending" and spec[1] is not None:
            defs.setdefault(name, []).append(spec[1])
        elif isinstance(spec, tuple) and spec and spec[0] == "texts":
            names_in = set(" ".join(spec[1]).replace("(", " ").replace(")", " ").replace(",", " ").split())
            defs.setdefault(name, []).extend(("text", n) for n in names_in)
    todo = list(names)
    while todo:
        for value in defs.get(todo.pop(), ()):
            found = {value[1]} if isinstance(value, tuple) else {_text(x) for x in _iter(value) if x.type == "identifier"}
            for n in found - names:
                names.add(n)
                todo.append(n)
    return names


def _updates(update: Any) -> list[Any] | None:
    """The update clause's parts (``log2N -= 2, N >>= 2, M <<= 2``), each a compound assignment or
    ``++``/``--`` of a plain name; None otherwise."""
    parts = []
    todo = [update]
    while todo:
        x = todo.pop(0)
        if x is None:
            return None
        if x.type == "comma_expression":
            todo = [x.child_by_field_name("left"), x.child_by_field_name("right"), *todo]
            continue
        target = x.child_by_field_name("left") if x.type == "assignment_expression" else \
            x.child_by_field_name("argument") if x.type == "update_expression" else None
        if target is None or target.type != "identifier" or (
                x.type == "assignment_expression" and _text(x.child_by_field_name("operator")) == "="):
            return None
        parts.append(x)
    return parts


def exit_loop(loop: Any) -> tuple[str, ...]:
    """The names a ``for`` without a declaration of its own steps in its update clause and no
    statement of its body assigns (``for (; log2N > 11; log2N -= 2, N >>= 2, M <<= 2) k<<<...>>>``):
    their values after it follow from those before it (:func:`run_exit`); () when it is not such a loop."""
    init, cond, update, body = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update", "body"))
    if init is not None or cond is None or cond.type != "binary_expression":
        return ()
    parts = _updates(update)
    if not parts:
        return ()
    names = tuple(dict.fromkeys(_text(p.child_by_field_name("left") or p.child_by_field_name("argument"))
                                for p in parts))
    for x in _iter(body) if body is not None else ():
        target = x.child_by_field_name("left") if x.type == "assignment_expression" else \
            x.child_by_field_name("argument") if x.type == "update_expression" or (
                x.type == "pointer_expression" and _text(x.child_by_field_name("operator")) == "&") else None
        if target is not None and _text(target) in names:
            return ()
    return names


_STEP = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "<<=": "<<", ">>=": ">>", "%=": "%", "&=": "&", "|=": "|"}


def run_exit(loop: Any, scope: Any, vals: dict[str, Any]) -> dict[str, int | float] | None:
    """The values of :func:`exit_loop`'s names after ``loop`` run from ``vals`` (at most
    :data:`MAX_TRIPS` passes); None when its condition or a step is not known."""
    passes = run_passes(loop, scope, vals)
    return passes[-1] if passes is not None else None


def run_passes(loop: Any, scope: Any, vals: dict[str, Any]) -> list[dict[str, int | float]] | None:
    """The values of :func:`exit_loop`'s names at the start of each pass of ``loop`` run from
    ``vals``, then after it (the last); None when its condition or a step is not known."""
    from cudalens.source import expr as E

    cond, parts = loop.child_by_field_name("condition"), _updates(loop.child_by_field_name("update")) or []
    names = exit_loop(loop)
    now = dict(vals)
    out: list[dict[str, int | float]] = []
    for _ in range(MAX_TRIPS + 1):
        c = scope.const_value(cond, now)
        if c is None or any(not isinstance(now.get(n), (int, float)) for n in names):
            return None
        out.append({n: now[n] for n in names})
        if not c:
            return out
        for p in parts:
            if p.type == "update_expression":
                name = _text(p.child_by_field_name("argument"))
                if not isinstance(now.get(name), (int, float)):
                    return None
                now[name] = now[name] + (1 if "++" in _text(p) else -1)
                continue
            name = _text(p.child_by_field_name("left"))
            by = scope.const_value(p.child_by_field_name("right"), now)
            op = _STEP.get(_text(p.child_by_field_name("operator")))
            if op is None or by is None or not isinstance(now.get(name), (int, float)):
                return None
            try:
                now[name] = E.apply_binary(op, now[name], by)
            except (E.Unknown, ZeroDivisionError, ValueError, OverflowError):
                return None
    return None

