"""Launch sites of one parsed file, each joined to the kernels it can launch and evaluated with
the host values known at it (:class:`cudalens.source.host.HostEnv`).

Forms found in host functions:

- triple chevrons ``k<<<g, b, smem, stream>>>(args)``, with explicit template arguments
  (``gemm<128, 8><<<...>>>``) mapped to the kernel's template parameters;
- ``cudaLaunchKernel`` / ``cudaLaunchCooperativeKernel`` (kernel, grid, block, ``void *args[]``,
  smem): the argument array is followed where it is declared with an initializer (``{&a, &n}``);
- ``cudaLaunchKernelEx(&config, kernel, args...)``: grid and block from ``config.gridDim = ...``
  and ``config.blockDim = ...`` in the same function;
- a launch through a name that is not a kernel (``kernels[k]<<<...>>>``, ``fn<<<...>>>``, a
  ``cudaLaunchKernel`` of a pointer): every kernel named where that name is declared or assigned
  (a dispatch table's initializer, ``auto fn = cond ? k1 : k2;``) is launched by the site.

Values a program reads from ``argv`` take its default (``argc > 1 ? atoi(argv[1]) : 1024``) and
become a :class:`~cudalens.project.launches.ValueRange` with the condition.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from cudalens.project.host_code import (
    _LAUNCH_APIS,
    _MAYBE,
    Callers,
    _args,
    _host_bodies,
    _iter,
    _line,
    _scalar,
    _scope,
    _text,
    body_calls,
    find,
    found_in_file,
    number_of,
    once,
    param_names,
)
from cudalens.project.launches import Dim3, ResolvedLaunch, ValueRange
from cudalens.source import syntax as syn
from cudalens.source.model import Kernel, SourceModel


def model_sites(model: SourceModel, kernels: Mapping[str, Kernel], root: str | None = None,
                callers: Callers | None = None) -> list[ResolvedLaunch]:
    """Every launch in ``model``'s host code of a kernel among ``kernels`` (by name), resolved;
    ``callers``: the values the calls of each launching host function pass (:func:`call_values`),
    which its parameters take."""
    from cudalens.project.chains import _envs, _iterations, _optional, _template_params, not_taken

    if model.tree is None or not kernels or not any(m in model.text for m in _MAYBE):
        return []
    scope, _functions = _scope(model)
    where = os.path.relpath(model.path, root) if root and os.path.isabs(model.path) else model.path
    out: dict[tuple[Any, ...], ResolvedLaunch] = {}
    later: dict[tuple[Any, ...], ResolvedLaunch] = {}  # launches a run with the program's defaults skips
    skipped: dict[str, dict[tuple[str, str, bool], None]] = {}  # kernel -> (site, condition, its truth) left out
    for fn, body in _host_bodies(model):
        nodes = body_calls(body)[1]
        if not nodes:
            continue
        name_ = syn.function_name(fn) or ""
        for env, optional in _envs(scope, body, param_names(fn),
                                   (callers or {}).get((model.path, name_)), _template_params(fn)):
            for node in nodes:
                api = syn.call_name(node) if node.type == "call_expression" else ".func"
                opt = optional or _optional(node, env)
                for e, note in _iterations(env, node):
                    dead = not_taken(node, e)
                    for r in _site(node, api, e, model, kernels, f"{where}:{_line(node)}"):
                        if dead:  # a launch the program does not make: said beside the kernel's others
                            skipped.setdefault(r.kernel, {}).setdefault((r.site or "", *dead), None)
                            continue
                        if note:
                            r = dataclasses.replace(r, notes=(*r.notes, note))
                        # a member of a local class is walked twice; one site, one entry per distinct launch
                        (later if opt else out).setdefault((r.kernel, r.site, r.block, r.grid, r.dynamic_smem,
                                                            r.params), r)
    kept = [*out.values(), *(r for k, r in later.items() if k not in out)]
    notes = {k: _not_made(v, {r.site or "" for r in kept if r.kernel == k}) for k, v in skipped.items()}
    return [dataclasses.replace(r, notes=(*r.notes, *notes[r.kernel])) if r.kernel in notes else r for r in kept]


def _not_made(skipped: dict[tuple[str, str, bool], None], kept_sites: set[str]) -> tuple[str, ...]:
    """The notes on a kernel's launches that the program's values leave out (:func:`chains.not_taken`);
    a site kept with other values (a loop, another caller) is left out only with those values."""
    out = []
    for site, cond, truth in skipped:
        said = f"`{cond}` is {'true' if truth else 'false'}"
        out.append(f"the launch at {site} is not made with the values for which {said}" if site in kept_sites
                   else f"the launch at {site} is not made: {said} with the program's values")
    return tuple(out)


def _targets(node: Any, model: SourceModel, kernels: Mapping[str, Kernel]) -> tuple[list[tuple[str, Any]], str]:
    """(kernel name, explicit template argument list node) pairs ``node`` names, and how; found once per
    node and kernel table while scopes_kept holds (each environment of the site asks again)."""
    return once(("targets", node, id(model), id(kernels)), (model, kernels),  # type: ignore[no-any-return]
                lambda: _named_targets(node, model, kernels))


def _named_targets(node: Any, model: SourceModel, kernels: Mapping[str, Kernel]) -> tuple[list[tuple[str, Any]], str]:
    direct = []
    for x in _iter(node):
        if x.type == "template_function":
            nm = x.child_by_field_name("name")
            if _text(nm) in kernels:
                direct.append((_text(nm), x.child_by_field_name("arguments")))
        elif x.type == "identifier" and _text(x) in kernels and (x.parent is None or x.parent.type != "template_function"):
            direct.append((_text(x), None))
    if direct:
        return direct[:1] if node.type in ("identifier", "template_function") else direct, "direct"
    base = node
    while base is not None and base.type not in ("identifier",):
        kids = [c for c in base.named_children if c.type not in ("comment",)]
        base = (base.child_by_field_name("argument") or base.child_by_field_name("function")
                or (kids[0] if kids else None))
    if base is None:
        return [], ""
    name = _text(base)
    named, table = _assigned(model, name)
    found = list(dict.fromkeys((t, None) for t in named if t in kernels))
    return found, ("dispatch table" if table or node.type == "subscript_expression" else "function pointer")


#: id(model) -> (the model, held so that its id stays its own; name -> (the values it is given, whether it
#: is an array), and name -> what _assigned finds for it)
_ASSIGNED: dict[int, tuple[SourceModel, dict[str, tuple[list[Any], bool]], dict[str, tuple[tuple[str, ...], bool]]]] = {}


def _assigned(model: SourceModel, name: str) -> tuple[tuple[str, ...], bool]:
    """(the identifiers of every value ``name`` is initialised or assigned with in ``model``, in order;
    whether ``name`` is an array): one search of the whole file per model, for every name at once
    (every launch through a name, and every definition a launch is matched to, asks again), and the
    identifiers of a name's values read once."""
    got = _ASSIGNED.get(id(model))
    if got is None or got[0] is not model:
        if len(_ASSIGNED) > 256:
            _ASSIGNED.clear()
        got = _ASSIGNED[id(model)] = (model, _assignments(model), {})
    if name not in got[2]:
        values, table = got[1].get(name, ([], False))
        got[2][name] = (tuple(_text(y) for v in values for y in _iter(v) if y.type == "identifier"), table)
    return got[2][name]


def _assignments(model: SourceModel) -> dict[str, tuple[list[Any], bool]]:
    """name -> (the values it is initialised or assigned with in ``model``, in order; whether it is an array)."""
    found: dict[str, list[Any]] = {}
    table: dict[str, bool] = {}
    for x in found_in_file(model, "init_declarator", "assignment_expression"):
        value: Any = None
        names: tuple[str, ...] = ()
        if x.type == "init_declarator":
            nm = _declarator_name(x.child_by_field_name("declarator"))
            if nm is not None:
                value, names = x.child_by_field_name("value"), (nm,)
                table[nm] = table.get(nm, False) or "[" in _text(x.child_by_field_name("declarator"))
        else:
            left = x.child_by_field_name("left")
            if left is not None:  # `name = ...` and `name[i] = ...` (the name before the first bracket)
                lt = _text(left)
                names = (lt, lt.partition("[")[0]) if "[" in lt else (lt,)
                value = x.child_by_field_name("right")
                for nm in names:
                    table[nm] = table.get(nm, False) or left.type == "subscript_expression"
        if value is not None:
            for nm in dict.fromkeys(names):
                found.setdefault(nm, []).append(value)
    return {nm: (found.get(nm, []), t) for nm, t in table.items()}


def _declarator_name(d: Any) -> str | None:
    while d is not None:
        if d.type in ("identifier", "field_identifier"):
            return _text(d)
        d = d.child_by_field_name("declarator")
    return None


def _site(call: Any, api: str, env: Any, model: SourceModel, kernels: Mapping[str, Kernel],
          site: str) -> list[ResolvedLaunch]:
    line = _line(call)
    args = _args(call)
    notes: list[str] = []
    fixed: tuple[Dim3 | None, Dim3 | None] | None = None  # grid and block from components (driver API, graphs)
    passed: list[Any] | None
    if api in ("cuLaunchKernel", ".func"):
        got = _driver_or_graph(call, api, args, env, model, kernels, line)
        if got is None:
            return []
        targets, via, fixed, smem_n, passed = got
        grid_n = block_n = None
    elif syn.is_launch(call):
        cfg = next(c for c in call.children if c.type == "kernel_call_syntax")
        parts = [c for c in cfg.named_children if c.type != "comment"]
        grid_n, block_n = (parts + [None, None])[:2]
        smem_n = parts[2] if len(parts) > 2 else None
        targets, how = _targets(call.child_by_field_name("function"), model, kernels)
        via = "chevrons" if how == "direct" else how
        passed = args
    else:
        if not args:
            return []
        via = _LAUNCH_APIS[api]
        if via == "cudaLaunchKernelEx":
            if len(args) < 2:
                return []
            targets, how = _targets(args[1], model, kernels)
            grid_n, block_n = _config_member(call, args[0], "gridDim"), _config_member(call, args[0], "blockDim")
            smem_n = _config_member(call, args[0], "dynamicSmemBytes")
            passed = args[2:]
        else:
            targets, how = _targets(args[0], model, kernels)
            grid_n, block_n = (args[1:3] + [None, None])[:2]
            smem_n = args[4] if len(args) > 4 else None
            passed = _arg_array(call, args[3]) if len(args) > 3 else None
        if how not in ("direct", ""):
            via += f" ({how})"
    if not targets:
        return []
    grid, block = fixed if fixed is not None else (_dims(env, grid_n, line), _dims(env, block_n, line))
    for what, node in (("grid", grid_n), ("block", block_n)):
        refs = env.inputs(node) if node is not None else ()
        if refs:
            notes.append(f"{what} depends on {', '.join(refs)} (the program's default used)")
    smem = _scalar(env, smem_n, line) if smem_n is not None else 0
    out = []
    for name, targs in targets:
        k = kernels[name]
        params: list[tuple[str, int | float | ValueRange]] = []
        if passed is not None:
            for p, a in zip(k.params, passed):
                if p.is_pointer or not p.name or a is None:
                    continue
                v = _scalar(env, a, line)
                if v is not None:
                    params.append((p.name, v))
        targ_texts: tuple[str, ...] = ()
        if targs is not None:
            items = [c for c in targs.named_children if c.type != "comment"]
            targ_texts = tuple(_text(c) for c in items)
            for tp, node in zip(k.template_params, items):
                v = _scalar(env, node, line)
                if v is not None:
                    params.append((tp, v))
        out.append(ResolvedLaunch(
            kernel=name, origin="launch", site=site, block=block, grid=grid,
            dynamic_smem=smem if isinstance(smem, (int, ValueRange)) else None, params=tuple(params),
            template_args=targ_texts, via=via, notes=tuple(notes)))
    return out


def _driver_or_graph(call: Any, api: str, args: list[Any], env: Any, model: SourceModel, kernels: Mapping[str, Kernel],
                     line: int) -> tuple[list[tuple[str, Any]], str, tuple[Dim3 | None, Dim3 | None], Any,
                                     list[Any] | None] | None:
    """(targets, via, (grid, block), smem node, argument nodes) of ``cuLaunchKernel(f, gx, gy, gz,
    bx, by, bz, smem, stream, args, extra)`` (``f`` from ``cuModuleGetFunction(&f, module, "name")``)
    or of a graph kernel node (``p.func = (void *)k; p.blockDim = ...; p.kernelParams = args;``)."""
    if api == "cuLaunchKernel":
        if len(args) < 7:
            return None
        name = _text(args[0]).strip()
        kname = None
        for x in syn.find_all(model.tree.root_node, "call_expression"):
            if syn.call_name(x) == "cuModuleGetFunction":
                a = _args(x)
                if len(a) >= 3 and _text(a[0]).replace(" ", "") == f"&{name}" and a[2].type == "string_literal":
                    kname = _text(a[2]).strip('"')
        if kname is None or kname not in kernels:
            return None
        grid, block = (_dim3_of(env, args[1:4], line), _dim3_of(env, args[4:7], line))
        passed = _arg_array(call, args[9]) if len(args) > 9 else None
        return [(kname, None)], "cuLaunchKernel", (grid, block), args[7] if len(args) > 7 else None, passed
    left, right = call.child_by_field_name("left"), call.child_by_field_name("right")
    targets, _how = _targets(right, model, kernels)
    base = _text(left)[: -len(".func")].replace(" ", "")
    members = _members(call, base)
    dims = []
    for what in ("gridDim", "blockDim"):
        if what in members:
            dims.append(_dims(env, members[what], line))
        else:
            parts = [members.get(f"{what}.{c}") for c in "xyz"]
            dims.append(_dim3_of(env, [p for p in parts if p is not None], line) if parts[0] is not None else None)
    params = members.get("kernelParams")
    passed = _arg_array(call, params) if params is not None else None
    return targets, "graph kernel node", (dims[0], dims[1]), members.get("sharedMemBytes"), passed


def _members(node: Any, base: str) -> dict[str, Any]:
    """``member -> value`` of the assignments ``base.member = value`` in ``node``'s function (the
    innermost value of a chain ``a.x = a.y = 1``)."""
    fn = node
    while fn is not None and fn.type != "function_definition":
        fn = fn.parent
    out: dict[str, Any] = {}
    for x in find(fn, "assignment_expression"):
        if _text(x.child_by_field_name("operator")) != "=":
            continue
        left = _text(x.child_by_field_name("left")).replace(" ", "")
        if left.startswith(base + "."):
            value = x.child_by_field_name("right")
            while value is not None and value.type == "assignment_expression":
                value = value.child_by_field_name("right")
            out[left[len(base) + 1:]] = value
    return out


def _dim3_of(env: Any, nodes: list[Any], line: int) -> Dim3 | None:
    vals = [number_of(_scalar(env, n, line)) for n in nodes[:3]]
    if any(v is None or v < 1 or v != int(v) for v in vals) or not vals:
        return None
    dims = [int(v) for v in vals if v is not None] + [1, 1, 1]
    return (dims[0], dims[1], dims[2])


def _dims(env: Any, node: Any, line: int) -> Dim3 | None:
    if node is None:
        return None
    return once(("dims", id(env), node, line), env, lambda: _dims_of(env, node, line))  # type: ignore[no-any-return]


def _dims_of(env: Any, node: Any, line: int) -> Dim3 | None:
    try:
        return env.dims(node, line)
    except Exception:  # noqa: BLE001 - an unreadable value is an unknown one
        return None


def _config_member(call: Any, config: Any, member: str) -> Any:
    """The value last assigned to ``config.member`` before ``call`` in its function."""
    name = _text(config).lstrip("&").strip()
    fn = call
    while fn is not None and fn.type != "function_definition":
        fn = fn.parent
    found = None
    for x in find(fn, "assignment_expression"):
        if x.start_byte < call.start_byte:
            left = x.child_by_field_name("left")
            if left is not None and _text(left).replace(" ", "") in (f"{name}.{member}", f"{name}->{member}"):
                found = x.child_by_field_name("right")
    return found


def _arg_array(call: Any, node: Any) -> list[Any] | None:
    """The argument nodes of ``void *args[] = {&a, &n}`` (None when not declared so)."""
    name = _text(node).lstrip("(").strip()
    fn = call
    while fn is not None and fn.type != "function_definition":
        fn = fn.parent
    for x in find(fn, "init_declarator"):
        if _declarator_name(x.child_by_field_name("declarator")) == name:
            value = x.child_by_field_name("value")
            if value is not None and value.type == "initializer_list":
                out = []
                for item in value.named_children:
                    while item is not None and item.type in ("pointer_expression", "cast_expression",
                                                             "parenthesized_expression"):
                        item = item.child_by_field_name("argument") or item.child_by_field_name("value") or (
                            item.named_children[-1] if item.named_children else None)
                    out.append(item)
                return out
    return None
