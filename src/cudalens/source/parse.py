"""The CUDA C++ front end: tree-sitter-cuda syntax -> :class:`~cudalens.source.model.SourceModel`.

What it establishes, per file:

- ``#define`` constants (object-like macros, value text as written);
- kernels (``__global__``, templates included) with parameters, ``__launch_bounds__``, arrays
  (``__shared__``, ``__constant__``, per-thread local), loops, calls, and the *unevaluated* array
  accesses and branches (index and condition expressions, see :mod:`cudalens.source.kernel_walk`);
- ``__device__`` functions, calls in host code, and kernel launch sites ``k<<<g, b, s, st>>>(...)``
  with the block/grid sizes where they are literal or follow from ``#define``s, constant integers
  or ``dim3`` locals, and the argument values that follow the same way (``LaunchSite.arg_values``);
- kernels declared ``extern "C"``, one at a time or in an ``extern "C" { ... }`` block.

The parser never raises on odd C++: what it cannot model goes to ``problems``. A file that is not
C/C++/CUDA at all raises :class:`~cudalens.errors.InputError` (criterion in :func:`looks_like_c`).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any, Iterator

from cudalens.errors import InputError, what_failed
from cudalens.source import expr as E
from cudalens.source import syntax as syn
from cudalens.source.declarations import params, qualifiers, template_params
from cudalens.source.detect import error_lines as _error_lines
from cudalens.source.detect import error_ratio, looks_like_c  # noqa: F401 - re-exported
from cudalens.source.host import KINDS as HOST_KINDS
from cudalens.source.host import HostEnv
from cudalens.source.kernel_walk import walk_kernel
from cudalens.source.limits import MAX_FILE_BYTES, MAX_NESTING, Budget, deep_points
from cudalens.source.model import Call, Kernel, LaunchSite, SourceModel
from cudalens.source.scope import FileScope
from cudalens.source.syntax import end_line_of, iter_nodes, line_of, parse_tree
from cudalens.source.types import element_bytes, strip_type

# Node types that may contain function definitions at file level.
_CONTAINERS = frozenset({
    "translation_unit", "template_declaration", "namespace_definition", "declaration_list",
    "linkage_specification", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
    "preproc_elifdef", "ERROR",
})
_LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})


text_of = E.node_text


# --------------------------------------------------------------------------------------------
# Entry points


def parse_file(path: str | Path, predefined: tuple[tuple[str, str], ...] = (),
               budget: Budget | None = None, forced: tuple[tuple[str, str], ...] = (),
               signatures_only: bool = False) -> SourceModel:
    """Read and parse a file; a file that is not CUDA C++ raises InputError naming it.

    ``predefined``: (name, macro text) pairs the file sees before its own ``#define``s, e.g. the
    macros of the project headers it includes (:meth:`cudalens.project.BuildContext.header_macros`).
    ``forced``: macros the build defines (``-D``), which win over the file's own ``#define``
    (the ``#ifndef BLOCK`` default a Makefile's ``-DBLOCK=32`` replaces).
    ``signatures_only``: the kernels' names, parameters and template parameters, not their bodies'
    accesses, loops and branches, and no host calls or launch sites (the project's launch table reads
    the tree itself: it needs no more, and parses every file of the project)."""
    p = Path(path)
    return _parse(read_source(p), str(p), predefined, budget, forced, signatures_only)


def read_source(p: Path) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES; InputError (one line) for anything else:
    a directory, a FIFO or device (which would block or never end), a symlink loop, a huge file."""
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if stat.S_ISDIR(_mode(p)):
            raise InputError(f"{p}: is a directory, not a CUDA source file") from None
        raise InputError(f"{p}: cannot read ({exc.strerror or 'error'})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{p}: is a directory, not a CUDA source file")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{p}: not a regular file (a FIFO, device or socket); refused")
        if st.st_size > MAX_FILE_BYTES:
            raise InputError(f"{p}: {st.st_size / 1e6:.1f} MB, over the limit of {MAX_FILE_BYTES / 1e6:g} MB "
                             "for one source file; refused")
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{p}: over the limit of {MAX_FILE_BYTES / 1e6:g} MB for one source file; refused")
    return data


def source_problem(path: str | Path) -> str | None:
    """Why ``path`` is refused before anything reads it (one line), or None: not found, a symlink
    loop, a directory, a FIFO or device, over MAX_FILE_BYTES. Nothing is opened."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"{path}: cannot read ({exc.strerror or 'error'})"
    if stat.S_ISDIR(st.st_mode):
        return f"{path}: is a directory, not a CUDA source file"
    if not stat.S_ISREG(st.st_mode):
        return f"{path}: not a regular file (a FIFO, device or socket); refused"
    if st.st_size > MAX_FILE_BYTES:
        return (f"{path}: {st.st_size / 1e6:.1f} MB, over the limit of {MAX_FILE_BYTES / 1e6:g} MB for one source "
                "file; refused")
    return None


def source_text(path: str | Path) -> str:
    """The text of a regular source file of at most the size limit; "" for anything else (a FIFO
    or device named like a source would block whoever reads it). The one guarded reader of source
    text (the project model, the launch resolution, the batch scheduler, the caches, rule Y1's callers)."""
    if source_problem(path) is not None:
        return ""
    try:
        return read_source(Path(path)).decode("utf-8", errors="replace")
    except (OSError, InputError):
        return ""


def _mode(p: Path) -> int:
    try:
        return os.stat(p).st_mode
    except OSError:
        return 0


def parse_source(text: str, path: str = "<string>") -> SourceModel:
    """Parse CUDA C++ text held in memory."""
    return _parse(text.encode("utf-8", "replace"), path)


def _parse(data: bytes, path: str, predefined: tuple[tuple[str, str], ...] = (),
           budget: Budget | None = None, forced: tuple[tuple[str, str], ...] = (),
           signatures_only: bool = False) -> SourceModel:
    tree = parse_tree(_spaced_chevrons(data))
    ok, why = looks_like_c(data, tree)
    if not ok:
        raise InputError(f"{path}: not a CUDA C++ source file ({why})")
    text = data.decode("utf-8", "replace")
    try:
        return _build(text, path, tree, predefined, budget or Budget(), forced, signatures_only)
    except RecursionError:
        return SourceModel(path, text, (), (), {}, (), (), ("unmodelled: nesting too deep",), tree)


_SPACED_LAUNCH = re.compile(rb"<<[ \t]+<([^;{}]*?)>>[ \t]+>")


def _spaced_chevrons(data: bytes) -> bytes:
    """``k << < g, b >> > (...)`` (nvcc takes it) as ``k<<<g, b>>>`` for the parser, same offsets."""
    if b"<< " not in data and b"<<\t" not in data:
        return data

    def fix(m: re.Match) -> bytes:
        whole = m.group(0)
        head = m.start(1) - m.start(0)
        tail = len(whole) - (m.end(1) - m.start(0))
        return b"<<<" + b" " * (head - 3) + m.group(1) + b">>>" + b" " * (tail - 3)

    return _SPACED_LAUNCH.sub(fix, data)


def _build(text: str, path: str, tree: Any, predefined: tuple[tuple[str, str], ...] = (),
           budget: Budget | None = None, forced: tuple[tuple[str, str], ...] = (),
           signatures_only: bool = False) -> SourceModel:
    root = tree.root_node
    problems: list[str] = []
    kernels_deep: list[Kernel] = []
    if root.has_error:
        lines = _error_lines(root)
        problems.append(f"{path}: parse error at line {lines[0]}" if len(lines) == 1 else
                        f"{path}: parse errors at lines {', '.join(map(str, lines[:8]))}"
                        + (f" and {len(lines) - 8} more" if len(lines) > 8 else ""))
    defines = {**dict(predefined), **_defines(root), **dict(forced)}
    functions = list(_functions(root))
    deep = deep_points(root)
    if deep:
        too_deep = {id(fn): line for fn, *_ in functions for b, line in deep if fn.start_byte <= b < fn.end_byte}
        problems.extend(f"line {line}: unmodelled: nesting too deep (more than {MAX_NESTING} levels)"
                        for line in sorted({line for _b, line in deep})[:8])
        kept = []
        for f in functions:
            if id(f[0]) not in too_deep:
                kept.append(f)
            elif "__global__" in f[1] and (name := (syn.function_name(f[0]) or None)) is not None:
                kernels_deep.append(Kernel(name, path, line_of(f[0]), end_line_of(f[0]), params(f[0]), f[2], None,
                                           node=f[0], template_params=f[3],
                                           problems=((f"kernel {name}: unmodelled: nesting too deep (more than "
                                                      f"{MAX_NESTING} levels at line {too_deep[id(f[0])]})"),)))
        functions = kept
    if signatures_only:
        return _signatures(text, path, tree, defines, functions, kernels_deep, problems)
    scope = FileScope.build(root, defines, functions)
    scope.budget = budget

    kernels: list[Kernel] = list(kernels_deep)
    device_functions: list[str] = []
    host_calls: list[Call] = []
    launches: list[LaunchSite] = []
    for fn, quals, is_template, tparams in functions:
        name = (syn.function_name(fn) or None)
        if name is None:
            problems.append(f"line {line_of(fn)}: a function whose name could not be read")
            continue
        if "__global__" in quals:
            try:
                kernels.append(_kernel(fn, name, path, is_template, tparams, scope))
            except Exception as exc:  # noqa: BLE001 - never fail the whole file on one kernel
                problems.append(f"kernel {name} (line {line_of(fn)}): not modelled ({what_failed(exc)})")
                kernels.append(Kernel(name, path, line_of(fn), end_line_of(fn), (), is_template, None, node=fn,
                                      problems=(f"not modelled: {what_failed(exc)}",)))
            continue
        if "__device__" in quals:
            device_functions.append(name)
            if "__host__" not in quals:
                continue
        body = fn.child_by_field_name("body")
        if body is None:
            continue
        host_calls.extend(c for c in _calls(body) if not syn.is_launch(c.node))
        launches.extend(_launch_sites(body, scope))
    # launches and calls at file level outside functions (rare: global initializers) are ignored
    for k in kernels:
        problems.extend(k.problems)
    return SourceModel(
        path=path,
        text=text,
        kernels=tuple(sorted(kernels, key=lambda k: k.line)),
        device_functions=tuple(dict.fromkeys(device_functions)),
        defines=defines,
        host_calls=tuple(host_calls),
        launch_sites=tuple(launches),
        problems=tuple(problems),
        tree=tree,
    )


def _signatures(text: str, path: str, tree: Any, defines: dict[str, str], functions: list, deep: list[Kernel],
                problems: list[str]) -> SourceModel:
    """The model :func:`_build` makes with ``signatures_only``: each kernel as :func:`_kernel` would
    name it (its parameters, template parameters and lines), without walking its body."""
    kernels = list(deep)
    for fn, quals, is_template, tparams in functions:
        name = syn.function_name(fn) or None
        if name is not None and "__global__" in quals:
            try:
                kparams = params(fn)
            except Exception:  # noqa: BLE001 - as _build keeps a kernel it cannot model
                kparams = ()
            kernels.append(Kernel(name, path, line_of(fn), end_line_of(fn), kparams, is_template, None, node=fn,
                                  template_params=tparams))
    return SourceModel(path=path, text=text, kernels=tuple(sorted(kernels, key=lambda k: k.line)), device_functions=(),
                       defines=defines, host_calls=(), launch_sites=(), problems=tuple(problems), tree=tree)


def _defines(root: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for n in iter_nodes(root, skip=frozenset({"function_definition"})):
        if n.type == "preproc_def":
            name = n.child_by_field_name("name")
            value = n.child_by_field_name("value")
            if name is not None:
                out[text_of(name)] = text_of(value).strip() if value is not None else ""
    return out


def _functions(root: Any) -> Iterator[tuple[Any, frozenset[str], bool, tuple[str, ...]]]:
    """(function_definition, execution-space qualifiers, is_template, template parameter names).

    Containers are walked in source order. A linkage specification has two shapes in tree-sitter:
    ``extern "C" { ... }`` keeps its functions in a ``declaration_list`` body, while the one-line
    ``extern "C" __global__ void k(...) {...}`` makes the function definition *itself* the body;
    that body is yielded, not descended into.
    """
    stack: list[tuple[Any, bool, tuple[str, ...]]] = [(root, False, ())]
    while stack:
        node, in_template, tparams = stack.pop()
        for child in reversed(node.named_children):
            if child.type == "function_definition":
                yield child, qualifiers(child), in_template, tparams
            elif child.type == "template_declaration":
                names = template_params(child)
                stack.append((child, True, names))
            elif child.type in _CONTAINERS:
                body = child.child_by_field_name("body")
                if body is not None and child.type != "ERROR" and body.type in ("function_definition",
                                                                                  "template_declaration"):
                    body = child  # extern "C" <one definition>: walk the specification, which holds it
                stack.append((body if body is not None and child.type != "ERROR" else child, in_template, tparams))


def _launch_bounds(fn: Any, scope: Any) -> tuple[int, ...] | None:
    for c in fn.children:
        if c.type == "launch_bounds":
            vals = []
            for a in c.named_children:
                v = scope.const_value(a)
                if not isinstance(v, (int, float)) or v <= 0:
                    break  # a template parameter or a constant we cannot see: unknown from here on
                vals.append(int(v))
            return tuple(vals)  # () when present but the block size is not a literal
    # tree-sitter-cuda may miss __launch_bounds__ written through a macro or after the type
    decl = fn.child_by_field_name("declarator")
    prefix = fn.text[: (decl.start_byte if decl is not None else fn.end_byte) - fn.start_byte].decode("utf-8", "replace")
    if "__launch_bounds__" in prefix:
        return ()
    return None


def _kernel(fn: Any, name: str, path: str, is_template: bool, tparams: tuple[str, ...], scope: Any) -> Kernel:
    kparams = params(fn)
    body = fn.child_by_field_name("body")
    problems: list[str] = []
    arrays, accesses, branches = (), (), ()
    if body is not None:
        arrays, accesses, branches, wproblems = walk_kernel(fn, body, kparams, tparams, scope)
        problems.extend(wproblems)
    return Kernel(
        name=name,
        file=path,
        line=line_of(fn),
        end_line=end_line_of(fn),
        params=kparams,
        is_template=is_template,
        launch_bounds=_launch_bounds(fn, scope),
        arrays=tuple(arrays),
        loops=tuple(loops(body)) if body is not None else (),
        calls=tuple(_calls(body)) if body is not None else (),
        accesses=tuple(accesses),
        branches=tuple(branches),
        node=fn,
        template_params=tparams,
        problems=tuple(f"kernel {name}: {p}" for p in problems),
    )


def loop_lines(node: Any, stop: Any = None) -> tuple[int, ...]:
    """Lines of the loops enclosing ``node`` (outermost first, innermost last)."""
    out = []
    cur = node.parent
    while cur is not None and cur != stop:
        t = cur.type
        if t in _LOOPS:
            out.append(cur.start_point[0] + 1)
        elif t == "function_definition" or t == "lambda_expression":
            break
        cur = cur.parent
    return tuple(reversed(out))


def loops(body: Any) -> Iterator[Any]:
    from cudalens.source.model import Loop

    for n in syn.nodes_of(body, *_LOOPS):  # (the tree's index: the rules read it too)
        kind = {"for_statement": "for", "while_statement": "while", "do_statement": "do", "for_range_loop": "for"}[n.type]
        var = vtype = start = step = None
        cond = n.child_by_field_name("condition")
        cond_text = text_of(cond).strip() or None if cond is not None else None
        if cond_text and cond_text.startswith("(") and cond_text.endswith(")") and n.type != "for_statement":
            cond_text = cond_text[1:-1].strip()
        if n.type == "for_statement":
            init = n.child_by_field_name("initializer")
            if init is not None and init.type == "declaration":
                t = init.child_by_field_name("type")
                vtype = " ".join(text_of(c) for c in init.children if c.type in ("type_qualifier",) or c == t) or None
                for d in init.children_by_field_name("declarator"):
                    if d.type == "init_declarator":
                        var = text_of(d.child_by_field_name("declarator"))
                        start = text_of(d.child_by_field_name("value"))
                        break
            elif init is not None and init.type == "assignment_expression":
                var = text_of(init.child_by_field_name("left"))
                start = text_of(init.child_by_field_name("right"))
            upd = n.child_by_field_name("update")
            if upd is not None:
                step = _step_text(upd, var)
        out = Loop(line_of(n), end_line_of(n), kind, var, vtype, start, cond_text, step)
        yield out


def _step_text(upd: Any, var: str | None) -> str | None:
    if upd.type == "update_expression":
        t = text_of(upd)
        return "1" if "++" in t else "-1"
    if upd.type == "assignment_expression":
        op = text_of(upd.child_by_field_name("operator"))
        right = text_of(upd.child_by_field_name("right"))
        if op == "+=":
            return right
        if op == "-=":
            return f"-({right})"
        if op == "=":
            r = upd.child_by_field_name("right")
            if r is not None and r.type == "binary_expression" and text_of(r.child_by_field_name("left")) == var:
                o = text_of(r.child_by_field_name("operator"))
                rr = text_of(r.child_by_field_name("right"))
                return rr if o == "+" else f"-({rr})" if o == "-" else text_of(upd)
        return text_of(upd)
    return text_of(upd) or None


def _calls(body: Any) -> Iterator[Call]:
    for n in syn.calls(body):
        args = n.child_by_field_name("arguments")
        arg_texts = tuple(text_of(a) for a in args.named_children if a.type != "comment") if args is not None else ()
        yield Call(line_of(n), syn.call_name(n), arg_texts, loop_lines(n), node=n)


def _launch_sites(body: Any, scope: Any) -> Iterator[LaunchSite]:
    host = None
    for n in syn.launches(body):
        if host is None:
            host = HostEnv(scope, body, syn.descendants(body, *HOST_KINDS))  # (from the tree's index)
        cfg = next(c for c in n.children if c.type == "kernel_call_syntax")
        parts = [c for c in cfg.named_children if c.type != "comment"]
        texts = [text_of(p) for p in parts]
        args = n.child_by_field_name("arguments")
        arg_texts = tuple(text_of(a) for a in args.named_children if a.type != "comment") if args is not None else ()
        grid = host.dims(parts[0], line_of(n)) if len(parts) > 0 else None
        block = host.dims(parts[1], line_of(n)) if len(parts) > 1 else None
        yield LaunchSite(
            line=line_of(n),
            kernel=syn.call_name(n),
            grid=texts[0] if texts else "",
            block=texts[1] if len(texts) > 1 else "",
            shared_mem=texts[2] if len(texts) > 2 else None,
            stream=texts[3] if len(texts) > 3 else None,
            args=arg_texts,
            block_dims=block,
            grid_dims=grid,
            loop_lines=loop_lines(n),
            node=n,
            arg_values=tuple(host.value(a, line_of(n)) for a in args.named_children if a.type != "comment")
            if args is not None else (),
        )


__all__ = ["parse_file", "parse_source", "parse_tree", "looks_like_c", "iter_nodes", "line_of", "text_of",
           "element_bytes", "strip_type"]
