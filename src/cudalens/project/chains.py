"""Host functions that launch kernels, directly or through other host functions (``main`` calls
``softmax_forward(k, ..., V, block_size)``, which calls ``softmax_forward1(..., block_size)``, which
launches), and the values each call passes: per call, per iteration of the host loops around it,
and per distinct tuple its calling function's own callers pass (cudalens.project.resolve follows
the chain). Calls a run with the program's defaults makes come first: a call under an ``if`` on the
command line (``--shmoo``) is optional and ordered after them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from cudalens.project.host_code import (
    Callers,
    _args,
    _host_bodies,
    _iter,
    _line,
    _scalar,
    _scope,
    _text,
    body_calls,
    host_env,
    once,
    param_names,
)
from cudalens.project.launches import ValueRange
from cudalens.source import syntax as syn
from cudalens.source.model import SourceModel


def host_calls(model: SourceModel) -> dict[str, tuple[tuple[str, ...], set[str], bool]]:
    """Host functions of ``model``: name -> (their parameter names, the names of the functions they
    call, whether they launch a kernel)."""
    if model.tree is None:
        return {}
    out = {}
    for fn, body in _host_bodies(model):
        calls, sites = body_calls(body)
        out[syn.function_name(fn) or ""] = (param_names(fn), {name for _c, name in calls}, bool(sites))
    return out


def call_values(model: SourceModel, wanted: Mapping[str, tuple[str, ...]],
                callers: Callers | None = None) -> dict[str, list[CallValues]]:
    """The values each call in ``model``'s host code of a function in ``wanted`` passes: one tuple
    per call, per iteration of the loops around it that give its arguments their values
    (:func:`~cudalens.source.host_loops.loop_choices`), and per distinct tuple the calling
    function's own callers pass it (``callers``: a wrapper calling a wrapper); each with whether
    it is optional (:func:`_optional`), the others first."""
    names = frozenset(wanted)
    if model.tree is None or not once(("mentions", id(model), names), model,
                                      lambda: any(name in model.text for name in names)):
        return {}
    scope, functions = _scope(model)
    out: dict[str, list[CallValues]] = {}
    for fn, quals, _t, _tp in functions:
        body = fn.child_by_field_name("body")
        if body is None or "__global__" in quals:
            continue
        calls = [(c, name) for c, name in body_calls(body)[0] if name in names]
        if not calls:
            continue
        mine = (callers or {}).get((model.path, syn.function_name(fn)))
        # each round of the callers' resolution asks again: a function whose callers pass the same values
        # (by repr: 1 and 1.0 differ) passes the same values
        for name, v in once(("call_values", id(scope), fn, names, repr(mine)), scope,
                            lambda fn=fn, body=body, calls=calls, mine=mine, tp=_tp:
                            _function_calls(scope, fn, body, calls, mine, tp)):
            out.setdefault(name, []).append(v)
    return {n: ordered(v)[:MAX_CALLS] for n, v in out.items()}


def _function_calls(scope: Any, fn: Any, body: Any, calls: list[tuple[Any, str]], mine: list[CallValues] | None,
                    tparams: tuple[str, ...]) -> list[tuple[str, CallValues]]:
    """(called name, the values the call passes) of each of ``calls`` in host function ``fn``, per
    environment its callers give it (``mine``, :func:`_envs`) and per iteration of the loops around the call."""
    out = []
    for env, optional in _envs(scope, body, param_names(fn), mine, tparams):
        for call, name in calls:
            opt = optional or _optional(call, env)
            for e, _note in _iterations(env, call):
                out.append((name, (tuple(_scalar(e, a, _line(call)) for a in _args(call))
                                   + _template_values(e, call), opt)))
    return out


#: the values a call passes, by position, and whether the call is optional (under a command-line option)
CallValues = tuple[tuple[Any, ...], bool]
#: distinct argument tuples kept per called function, and evaluated per calling function
MAX_CALLS = 16
MAX_SEEDS = 8


def ordered(calls: list[CallValues]) -> list[CallValues]:
    """Distinct value tuples, those of calls a run with the program's defaults makes first."""
    seen: dict[tuple[Any, ...], bool] = {}
    for values, optional in calls:
        seen[values] = seen.get(values, True) and optional
    return sorted(seen.items(), key=lambda c: c[1])


def _guards(node: Any) -> list[tuple[Any, bool]]:
    """The condition of each ``if`` around ``node`` in its function, innermost first, with whether ``node``
    is in its then-branch (True) or its else-branch (False); found once per node while scopes_kept holds."""
    return once(("guards", node), node, lambda: list(_ifs_around(node)))  # type: ignore[no-any-return]


def _ifs_around(node: Any) -> Iterator[tuple[Any, bool]]:
    cur = node
    while cur.parent is not None and cur.parent.type != "function_definition":
        parent = cur.parent
        if parent.type == "if_statement":
            cond = parent.child_by_field_name("condition")
            then = (True if cur == parent.child_by_field_name("consequence")
                    else False if cur == parent.child_by_field_name("alternative") else None)
            if cond is not None and then is not None:
                yield cond, then
        cur = parent


def _optional(node: Any, env: Any) -> bool:
    """Whether ``node`` runs only under an ``if`` on the program's command line (``if
    (checkCmdLineFlag(argc, argv, "shmoo"))``, ``if (argc > 2)``): a run with the defaults skips it
    (worked out once per environment and node while scopes_kept holds)."""
    return once(("optional", id(env), node), env, lambda: _is_optional(node, env))  # type: ignore[no-any-return]


def _is_optional(node: Any, env: Any) -> bool:
    for cond, then in _guards(node):
        if not then:
            continue
        words = {_text(x) for x in _iter(cond) if x.type == "identifier"}
        if words & {"argc", *env._argv} or env.inputs(cond):
            return True
    return False


def not_taken(node: Any, env: Any) -> tuple[str, bool] | None:
    """Why ``node`` does not run with ``env``'s values: the condition (its text, and the truth those values
    give it) of an ``if`` around it that they settle exactly, no program input among them, the other way
    (``if (block_size == 16)`` with ``block_size`` 32 from the caller); None where it runs or may run
    (worked out once per environment and node while scopes_kept holds)."""
    return once(("not_taken", id(env), node), env, lambda: _not_taken(node, env))  # type: ignore[no-any-return]


def _not_taken(node: Any, env: Any) -> tuple[str, bool] | None:
    for cond, then in _guards(node):
        expr = cond.child_by_field_name("value") if cond.type == "condition_clause" else cond
        if expr is not None and not env.inputs(expr):
            truth = env.truth(expr, _line(expr))
            if truth is not None and truth != then:
                return _text(expr), truth
    return None


def _envs(scope: Any, body: Any, names: tuple[str, ...], calls: list[CallValues] | None,
          tparams: tuple[str, ...] = ()) -> list[tuple[Any, bool]]:
    """The host environments of a function, each with whether it is optional: one per distinct
    tuple its callers pass (at most :data:`MAX_SEEDS`, non-optional first), else one with its
    parameters unknown. ``tparams``: the function's template parameters, which the explicit
    template arguments of its calls give (:class:`TemplateArgs`)."""
    if not calls:
        return [(host_env(scope, body), False)]
    base = host_env(scope, body)
    # the same tuple seeds the same copy (each round of the callers' resolution, and the sites, ask again)
    return [(once(("seed", id(base), names, repr(call), tparams), base, lambda call=call: _seed(base, names, [call], tparams)),
             optional) for call, optional in ordered(calls)[:MAX_SEEDS]]


class TemplateArgs(tuple):
    """The explicit template arguments of a call (``reduce<float>(...)``), the last item of its values:
    a number, the text of a type whose size is known (``"float"``: ``sizeof(T)`` = 4), else None."""


def _template_values(env: Any, call: Any) -> tuple[Any, ...]:
    """``(TemplateArgs(...),)`` for a call with explicit template arguments, else ``()``."""
    from cudalens.source.types import element_bytes

    fn = call.child_by_field_name("function")
    while fn is not None and fn.type == "qualified_identifier":
        fn = fn.child_by_field_name("name")
    targs = fn.child_by_field_name("arguments") if fn is not None and fn.type == "template_function" else None
    if targs is None:
        return ()
    out: list[Any] = []
    for item in targs.named_children:
        if item.type == "comment":
            continue
        v = _scalar(env, item, _line(call))
        out.append(v if v is not None else _text(item).strip() if element_bytes(_text(item)) is not None else None)
    return (TemplateArgs(out),)


def _template_params(fn: Any) -> tuple[str, ...]:
    """The template parameter names of host function ``fn`` (``template <class T> void reduce(...)``)."""
    from cudalens.source.declarations import template_params

    return template_params(fn.parent) if fn.parent is not None and fn.parent.type == "template_declaration" else ()


def _seed(env: Any, names: tuple[str, ...], calls: list[tuple[Any, ...]], tparams: tuple[str, ...] = ()) -> Any:
    """A copy of ``env`` seeded with the first known value the ``calls`` pass each parameter (``names``)
    and template parameter (``tparams``; a type argument gives ``sizeof(T)``); ``env`` itself where
    they pass none."""
    from cudalens.source.types import element_bytes

    values: dict[str, int | float] = {}
    inputs: dict[str, str] = {}
    split = [(c[:-1], c[-1]) if c and isinstance(c[-1], TemplateArgs) else (c, ()) for c in calls]
    for which, pnames in ((0, names), (1, tparams)):
        for i, name in enumerate(pnames):
            known = [c[which][i] for c in split if i < len(c[which]) and c[which][i] is not None]
            if not (name and known):
                continue
            v = known[0]
            if isinstance(v, str):  # a type: its size
                size = element_bytes(v)
                if size is not None:
                    values[f"sizeof({name})"] = size
                continue
            values[name] = v.lo if isinstance(v, ValueRange) else v
            if isinstance(v, ValueRange):
                inputs[name] = v.condition.split(";")[0].removeprefix("from ")
    return env.seeded_copy(values, inputs) if values else env


def _iterations(env: Any, node: Any) -> list[tuple[Any, str]]:
    """(environment, note) per iteration of the host loops that give ``node``'s values."""
    from cudalens.source.host_loops import loop_choices

    def iterations() -> list[tuple[Any, str]]:
        try:
            choices = loop_choices(env, node)
        except Exception:  # noqa: BLE001 - a loop the reader cannot follow gives one launch, as before
            return [(env, "")]
        return [(env.fixed(vals, since) if vals else env, note) for vals, note, since in choices]

    return once(("iterations", id(env), node), env, iterations)  # type: ignore[no-any-return]
