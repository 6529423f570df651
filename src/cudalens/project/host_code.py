"""The host code of one parsed file as the launch layer reads it: its syntax helpers, its file scope
(constants, typedefs, host functions a launch's values may call, the program's shared constants), its
host function bodies, which calls are launch sites, and a scalar argument's value at a line. Read by
:mod:`cudalens.project.sites` (the sites) and :mod:`cudalens.project.chains` (the callers of wrappers)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

from cudalens.project.launches import ValueRange
from cudalens.source import syntax as syn
from cudalens.source.model import SourceModel

_LAUNCH_APIS = {"cudaLaunchKernel": "cudaLaunchKernel", "cudaLaunchCooperativeKernel": "cudaLaunchCooperativeKernel",
                "cudaLaunchKernelEx": "cudaLaunchKernelEx", "cudaLaunchKernelExC": "cudaLaunchKernelEx"}


def _text(n: Any) -> str:
    return n.text.decode("utf-8", "replace") if n is not None and n.text is not None else ""


def _iter(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))


def _line(n: Any) -> int:
    return int(n.start_point[0]) + 1


def _scope(model: SourceModel) -> Any:
    """(the file scope of ``model``'s host code, its functions); built once per model while
    :func:`scopes_kept` holds (the scope is not changed once built)."""
    kept = _SCOPES.get()
    if kept is None:
        return _built_scope(model)
    if id(model) not in kept:
        kept[id(model)] = (model, _built_scope(model))  # the model kept too: its id stays its own
    return kept[id(model)][1]


@contextmanager
def scopes_kept() -> Iterator[None]:
    """Within the block, :func:`_scope` builds each model's scope once (and :func:`host_env` each host
    function's environment once): one resolution of a project asks for them once per chain level."""
    token = _SCOPES.set({})
    try:
        yield
    finally:
        _SCOPES.reset(token)


def host_env(scope: Any, body: Any) -> Any:
    """``HostEnv(scope, body)``, built once per (scope, body) while :func:`scopes_kept` holds (an
    environment is copied, never changed, once built: HostEnv.seeded_copy, HostEnv.fixed)."""
    from cudalens.source.host import HostEnv

    kept = _SCOPES.get()
    if kept is None:
        return HostEnv(scope, body)
    key = ("env", id(scope), body)
    if key not in kept:
        kept[key] = (scope, HostEnv(scope, body, body_nodes(body)))
    return kept[key][1]


def once(key: Any, held: Any, make: Any) -> Any:
    """``make()``, worked out once per ``key`` while :func:`scopes_kept` holds (else each time); ``held``:
    the objects whose ids ``key`` names, held with the value so that each id stays its own. For values
    that follow from their key alone (environments are never changed once built)."""
    memo = _SCOPES.get()
    if memo is None:
        return make()
    got = memo.get(key)
    if got is None:
        got = memo[key] = (held, make())
    return got[1]


#: (model id -> (model, its scope and functions)), (("env", scope id, body) -> (scope, environment)) and
#: the values :func:`once` keeps, while :func:`scopes_kept` holds
_SCOPES: ContextVar[dict[Any, tuple[Any, Any]] | None] = ContextVar("cudalens_scopes_kept", default=None)


def _built_scope(model: SourceModel) -> Any:
    from cudalens.source.parse import _functions
    from cudalens.source.scope import FileScope
    from cudalens.source.type_facts import header_facts

    root = model.tree.root_node
    scope = FileScope.build(root, dict(model.defines), list(_functions(root)))
    scope.facts = header_facts(model.path, root, set(model.defines))
    for name, v in _SHARED.get().items():  # constants another file of the program defines with external linkage
        if name not in scope.const_exprs and name not in scope.defines:
            scope.const_exprs[name] = ("n", v)
    for fn, quals, is_template, _tp in _functions(root):  # host functions a launch's values may call
        name, body = syn.function_name(fn), fn.child_by_field_name("body")
        if name and body is not None and not is_template and "__global__" not in quals and (
                "__device__" not in quals or "__host__" in quals):
            scope.host_fns[name] = (param_names(fn), body)
    return scope, list(_functions(root))


#: constants of the program's files with external linkage (``extern "C" const uint MIN_SIZE = 4;``), by
#: name, while :func:`cudalens.project.resolve.resolve_models` runs (:func:`shared_constants`)
_SHARED: ContextVar[Mapping[str, int | float]] = ContextVar("cudalens_shared_constants", default=MappingProxyType({}))


def shared_constants(models: list[SourceModel]) -> dict[str, int | float]:
    """The integral constants the files of ``models`` define with external linkage (``extern``, or
    inside ``extern "C" { }``), by value in their own file; a name two files give different values
    is left out."""
    from cudalens.source import expr as E
    from cudalens.source.scope import _file_declarations

    out: dict[str, int | float] = {}
    clash: set[str] = set()
    for m in models:
        if m.tree is None or "extern" not in m.text:
            continue
        scope = None
        for decl in _file_declarations(m.tree.root_node):
            up = decl.parent.parent if decl.parent is not None and decl.parent.type == "declaration_list" else decl.parent
            ext = (up is not None and up.type == "linkage_specification") or any(
                c.type == "storage_class_specifier" and _text(c) == "extern" for c in decl.children)
            if not ext:
                continue
            if scope is None:
                scope = _scope(m)[0]
            for d in decl.children_by_field_name("declarator"):
                name = _text(d.child_by_field_name("declarator")) if d.type == "init_declarator" else ""
                if name not in scope.const_exprs:
                    continue
                try:
                    v = E.eval_scalar(scope.const_exprs[name], scope.macro_values())
                except (E.Unknown, RecursionError):
                    continue
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    continue
                if name in out and out[name] != v:
                    clash.add(name)
                out[name] = v
    return {k: v for k, v in out.items() if k not in clash}


# (file, host function) -> the values each call passes, by position, and whether the call is optional
Callers = Mapping[tuple[str, str], list[tuple[tuple[Any, ...], bool]]]
_MAYBE = ("<<", "cudaLaunch", "cuLaunchKernel", ".func")


def _host_bodies(model: SourceModel) -> list[tuple[Any, Any]]:
    """(function, body) of every host function of ``model``, class members included; found once per
    model while :func:`scopes_kept` holds."""
    return once(("bodies", id(model)), model, lambda: list(_find_host_bodies(model)))  # type: ignore[no-any-return]


#: the node kinds the launch layer searches files and functions for (:func:`find`)
_SEARCHED = ("function_definition", "init_declarator", "assignment_expression")


def find(node: Any, *kinds: str) -> list[Any]:
    """The nodes of ``kinds`` (among :data:`_SEARCHED`) under ``node`` (itself included) in source order,
    as ``syn.find_all`` finds them, by a walk of a tree cursor: a tree-sitter query takes ~20 ms to
    compile, and the launch layer searches the 22 files of llm.c in about as long again; the walk takes
    ~1 ms a file. A node of those kinds has children: a leaf's own node is not read."""
    out: list[Any] = []
    if node is None:
        return out
    cursor = node.walk()
    while True:
        if cursor.goto_first_child():  # (back to the node with children, read, then down again)
            cursor.goto_parent()
            n = cursor.node
            if n.type in kinds:
                out.append(n)
            cursor.goto_first_child()
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return out


def found_in_file(model: SourceModel, *kinds: str) -> list[Any]:
    """:func:`find` over the whole file of ``model`` for kinds among :data:`_SEARCHED`, its one walk made
    once per model while :func:`scopes_kept` holds."""
    root = model.tree.root_node
    return [n for n in once(("found", id(model)), model, lambda: find(root, *_SEARCHED)) if n.type in kinds]


def _find_host_bodies(model: SourceModel) -> Iterator[tuple[Any, Any]]:
    from cudalens.source.declarations import qualifiers

    for fn in found_in_file(model, "function_definition"):
        quals = qualifiers(fn)
        if "__global__" in quals or ("__device__" in quals and "__host__" not in quals):
            continue
        body = fn.child_by_field_name("body")
        if body is not None:
            yield fn, body


def body_calls(body: Any) -> tuple[list[tuple[Any, str]], list[Any]]:
    """(every call in ``body`` that is not a launch, with the name it calls; every launch site in it,
    :func:`_is_site`), each in source order: one walk, once per body while :func:`scopes_kept` holds."""
    return once(("body", body), body, lambda: _walk_body(body))  # type: ignore[no-any-return]


def body_nodes(body: Any) -> list[Any]:
    """Every named node of ``body`` in preorder (``list(_iter(body))``), walked once per body while
    :func:`scopes_kept` holds (its calls and launch sites, and its host environment, read the same walk)."""
    return once(("nodes", body), body, lambda: _named_nodes(body))  # type: ignore[no-any-return]


def _named_nodes(node: Any) -> list[Any]:
    """``list(_iter(node))`` by a walk of a tree cursor (about twice as fast): ``node``, then each named
    node under it in preorder, none below an anonymous one (named_children does not look there)."""
    out = [node]
    cursor = node.walk()
    if not cursor.goto_first_child():
        return out
    depth = 1
    while True:
        n = cursor.node
        if n.is_named:
            out.append(n)
            if cursor.goto_first_child():
                depth += 1
                continue
        while not cursor.goto_next_sibling():
            cursor.goto_parent()
            depth -= 1
            if depth == 0:
                return out


def _walk_body(body: Any) -> tuple[list[tuple[Any, str]], list[Any]]:
    calls: list[tuple[Any, str]] = []
    sites: list[Any] = []
    for n in body_nodes(body):
        if n.type == "call_expression":
            if _is_site(n):
                sites.append(n)
            if not syn.is_launch(n):
                calls.append((n, syn.call_name(n)))
        elif n.type == "assignment_expression" and _is_site(n):
            sites.append(n)
    return calls, sites


def param_names(fn: Any) -> tuple[str, ...]:
    """The names of function ``fn``'s parameters, read once per function while :func:`scopes_kept` holds."""
    from cudalens.source.declarations import param_names as names

    return once(("params", fn), fn, lambda: names(fn))  # type: ignore[no-any-return]


def _is_site(n: Any) -> bool:
    if n.type == "call_expression":
        return syn.is_launch(n) or syn.call_name(n) in _LAUNCH_APIS or syn.call_name(n) == "cuLaunchKernel"
    if n.type == "assignment_expression":  # a graph kernel node: `params.func = (void *)kernel;`
        left = n.child_by_field_name("left")
        return left is not None and left.type == "field_expression" and _text(left).endswith(".func")
    return False


def _args(call: Any) -> list[Any]:
    """The argument nodes of ``call`` (comments left out), read once per call while :func:`scopes_kept` holds."""
    return once(("args", call), call, lambda: _arguments(call))  # type: ignore[no-any-return]


def _arguments(call: Any) -> list[Any]:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def number_of(v: Any) -> int | float | None:
    return v.lo if isinstance(v, ValueRange) else v


def _scalar(env: Any, node: Any, line: int) -> int | float | ValueRange | None:
    if node is None:
        return None
    return once(("scalar", id(env), node, line), env, lambda: _scalar_of(env, node, line))  # type: ignore[no-any-return]


def _scalar_of(env: Any, node: Any, line: int) -> int | float | ValueRange | None:
    try:
        v = env.value(node, line)
        if v is None and node.type == "type_descriptor":  # `gemm<bm, 8>`: a template argument reads as a type
            name = _text(node).strip()
            before = env._values_before(line)
            v = before.get(name) if name in before else _macro(env, name) if name.isidentifier() else None
            v = v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    except Exception:  # noqa: BLE001
        return None
    if v is None:
        return None
    refs = env.inputs(node)
    if refs:
        return ValueRange(v, v, f"from {', '.join(refs)}; {v:g} with the program's defaults")
    return v


def _macro(env: Any, name: str) -> int | float | None:
    from cudalens.source import expr as E

    try:
        v = E.eval_scalar(env.scope.resolve_const(name), env.scope.macro_values())
    except (E.Unknown, RecursionError):
        return None
    return v if isinstance(v, (int, float)) else None
