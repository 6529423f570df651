"""The one launch resolution: every launch site of the project joined to its kernel across files,
and the launch each kernel is evaluated under (:meth:`LaunchTable.resolve`).

Distinct launches (:meth:`LaunchTable.distinct`): a site inside host loops gives one launch per
iteration (a loop over ``block_sizes[]``, a counted loop, a loop stepping values in its update
clause), and a site in a wrapper one per distinct tuple of values its callers pass, up the chain
to ``main`` (cudalens.project.chains), in program order (calls under an ``if`` on the command line
after the others). Representative launch (the rule, said in the notes when a kernel has several):
the first launch whose block is known and fits a block (at most 1024 threads), the kernel's own
file first, then the other files in path order, each by line (a sweep's first size: what a
profiler's first launch measures). Each scalar or template parameter takes the first value a
site passes, in the same order; sites that pass another value are named. A kernel with no site is
evaluated under the plausible blocks of :data:`PLAUSIBLE_BLOCKS` (``origin="assumed"``; the first gives
its figures, and pipeline.plausible keeps the findings that hold under each). ``--block`` (for all kernels, or for one:
``transpose=32,8``) replaces the block (``origin="user"``); ``--define KERNEL:NAME=VALUE`` sets one
kernel's parameter.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Union

from cudalens.project.launches import Dim3, ResolvedLaunch, ValueRange
from cudalens.project.tree import source_text
from cudalens.real_paths import real_path
from cudalens.source.model import Kernel, SourceModel

DEFAULT_BLOCK: Dim3 = (256, 1, 1)
DEFAULT_GRID: Dim3 = (2, 1, 1)
#: Where no launch exists (issue #26), the blocks a kernel is evaluated under, declared here only: a
#: kernel that reads threadIdx.y or blockDim.y takes the 2-D ones. The first gives the figures shown;
#: a finding is reported only where it holds under each (pipeline.plausible).
PLAUSIBLE_BLOCKS: Mapping[int, tuple[Dim3, ...]] = MappingProxyType({
    1: (DEFAULT_BLOCK, (128, 1, 1), (512, 1, 1)),
    2: ((32, 8, 1), (16, 16, 1)),
})
_TWO_D = re.compile(r"\b(?:threadIdx|blockDim)\s*\.\s*y\b")
MAX_BLOCK_THREADS = 1024
#: ``--block``: one block for every kernel, or per kernel name (None: every other kernel)
UserBlock = Union[Dim3, Mapping[Union[str, None], Dim3], None]


def number(v: Any) -> int | float | None:
    """A value the models can compute with: a range's default (its low end), a number as is."""
    if isinstance(v, ValueRange):
        return v.lo
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def user_block(block: UserBlock, kernel: str) -> Dim3 | None:
    if block is None or isinstance(block, tuple):
        return block
    return block.get(kernel, block.get(None))


def kernel_defines(defines: Mapping[str, Any], kernel: str) -> dict[str, Any]:
    """``defines`` as kernel ``kernel`` sees them: global ones, then its own (``kernel:name``)."""
    out = {k: v for k, v in defines.items() if ":" not in k}
    out.update({k.split(":", 1)[1]: v for k, v in defines.items() if k.split(":", 1)[0] == kernel and ":" in k})
    return out


def with_type_args(k: Kernel, defines: dict[str, Any]) -> dict[str, Any]:
    """``defines`` with the launch's type template arguments (``head_scale<float, 4>``: T = float),
    which give the element width of ``T`` accesses; a ``--define`` of the same name wins."""
    from cudalens.source.expr import parse_number
    from cudalens.source.types import element_bytes

    out = dict(defines)
    for name, arg in zip(k.template_params, k.launch.template_args if k.launch is not None else ()):
        if name not in out and parse_number(arg) is None and element_bytes(arg) is not None:
            out[name] = arg
    return out


def plausible_blocks(kernel: Kernel) -> tuple[Dim3, ...]:
    """The blocks a kernel with no launch is evaluated under (:data:`PLAUSIBLE_BLOCKS`)."""
    text = kernel.node.text.decode("utf-8", "replace") if kernel.node is not None and kernel.node.text else ""
    return PLAUSIBLE_BLOCKS[2 if _TWO_D.search(text) else 1]


def shapes_text(shapes: Iterable[Dim3]) -> str:
    """``256, 128, 512 threads``; ``32x8, 16x16 threads``."""
    return ", ".join(str(d[0]) if d[1] == d[2] == 1 else "x".join(str(x) for x in (d if d[2] > 1 else d[:2]))
                     for d in shapes) + " threads"


def _threads(d: Any) -> int:
    return d[0] * d[1] * d[2] if isinstance(d, tuple) else 0


@dataclass(frozen=True)
class LaunchTable:
    """Every resolved launch site of the project, by kernel name (project order)."""

    # (kernel name, real path of its definition) -> its launch sites
    sites: Mapping[tuple[str, str], tuple[ResolvedLaunch, ...]] = field(default_factory=lambda: MappingProxyType({}))
    root: str | None = None
    # why the table holds one file's launches, not the project's (its resolution stopped at a limit):
    # every launch it resolves carries this line in its notes
    partial: str | None = None

    def own_file(self, model: SourceModel) -> LaunchTable:
        """For a partial table: the launches in ``model``'s own file, still saying why."""
        return dataclasses.replace(resolve_models([model], self.root), partial=self.partial)

    def _site_file(self, r: ResolvedLaunch) -> str:
        path = (r.site or "").rsplit(":", 1)[0]
        return real_path(os.path.join(self.root or ".", path))

    def launches(self, kernel: Kernel) -> tuple[ResolvedLaunch, ...]:
        own = real_path(kernel.file)
        return tuple(sorted(self.sites.get((kernel.name, own), ()), key=lambda r: self._site_file(r) != own))

    def resolve(self, kernel: Kernel, block: UserBlock = None,
                defines: Mapping[str, Any] | None = None) -> ResolvedLaunch:
        """The launch ``kernel`` is evaluated under (see the module docstring)."""
        sites = self.launches(kernel)
        chosen = next((s for s in sites if s.block is not None and 0 < _threads(s.block) <= MAX_BLOCK_THREADS),
                      sites[0] if sites else None)
        notes: list[str] = []
        if chosen is None:
            shapes = plausible_blocks(kernel)
            launch = ResolvedLaunch(kernel.name, "assumed", block=shapes[0], grid=None,
                                    assumption=f"{shapes_text(shapes[:1])}, no launch found; findings hold for "
                                               f"blocks of {shapes_text(shapes)}")
        else:
            blk = chosen.block if chosen.block is not None and 0 < _threads(chosen.block) <= MAX_BLOCK_THREADS else None
            if blk is None:
                notes.append(f"block at {chosen.site} not derivable ({_threads(DEFAULT_BLOCK)} threads assumed)")
            others: dict[str, list[str]] = {}
            for s in sites:
                if s.block not in (None, chosen.block) and str(s.block) not in others.get(s.site or "?", []):
                    others.setdefault(s.site or "?", []).append(str(s.block))
            if others:
                notes.append("also launched with block " + "; ".join(
                    f"{', '.join(b)} at {site}" for site, b in list(others.items())[:4]) +
                    " (evaluated under the first launch whose block is known)")
            params, pnotes = self._params(kernel, chosen, sites)
            launch = ResolvedLaunch(kernel.name, "launch", chosen.site, blk or DEFAULT_BLOCK, chosen.grid,
                                    chosen.dynamic_smem, params, chosen.template_args, None, chosen.via,
                                    (*chosen.notes, *notes, *pnotes))
        own = user_block(block, kernel.name)
        given = self._given(kernel, defines)
        params = tuple((n, v) for n, v in launch.params if n not in given) + tuple(given.items())
        return ResolvedLaunch(kernel.name, "user" if own is not None else launch.origin, launch.site,
                              own or launch.block, launch.grid, launch.dynamic_smem, params, launch.template_args,
                              launch.assumption if own is None else None, launch.via,
                              (*launch.notes, *((self.partial,) if self.partial else ())))

    def distinct(self, kernel: Kernel, block: UserBlock = None,
                 defines: Mapping[str, Any] | None = None) -> tuple[ResolvedLaunch, ...]:
        """Every distinct launch of ``kernel`` (block, grid, shared bytes, values passed): the
        representative (:meth:`resolve`) first, then each other site's launch whose block is known,
        in the order of :meth:`launches` (a site in a loop over block sizes gives one per size).
        Only the representative where ``--block`` names the block or no launch was found."""
        first = self.resolve(kernel, block, defines)
        if first.origin != "launch":
            return (first,)
        given = self._given(kernel, defines)
        out = {_key(first): first}
        for s in self.launches(kernel):
            if s.block is None or not 0 < _threads(s.block) <= MAX_BLOCK_THREADS:
                continue
            params = tuple((n, v) for n, v in s.params if n not in given) + tuple(given.items())
            r = dataclasses.replace(s, params=params)
            out.setdefault(_key(r), r)
        return tuple(out.values())

    @staticmethod
    def _given(kernel: Kernel, defines: Mapping[str, Any] | None) -> dict[str, Any]:
        """The ``--define`` values of ``kernel``'s scalar and template parameters."""
        return {n: v for n, v in kernel_defines(defines or {}, kernel.name).items()
                if isinstance(v, (int, float)) and (n in kernel.template_params or
                                                    any(p.name == n and not p.is_pointer for p in kernel.params))}

    def _params(self, kernel: Kernel, chosen: ResolvedLaunch,
                sites: tuple[ResolvedLaunch, ...]) -> tuple[tuple[tuple[str, Any], ...], list[str]]:
        order = (chosen, *(s for s in sites if s is not chosen))
        out: list[tuple[str, Any]] = []
        notes: list[str] = []
        names = [p.name for p in kernel.params if not p.is_pointer and p.name] + list(kernel.template_params)
        for name in names:
            passed = [(s.site, dict(s.params).get(name)) for s in order]
            known = [(site, v) for site, v in passed if v is not None]
            if not known:
                continue
            site, v = known[0]
            out.append((name, v))
            shown = f"{v.lo:g} ({v.condition})" if isinstance(v, ValueRange) else f"{v:g}"
            note = f"{name} = {shown} as passed by the launch at {_where(site)}"
            differ: dict[str, list[str]] = {}
            for s, w in passed:
                if w != v:
                    text = "an underivable value" if w is None else f"{number(w):g}"
                    if text not in differ.setdefault(_where(s), []):
                        differ[_where(s)].append(text)
            if differ:
                note += "; " + "; ".join(f"the launch at {where} {'also ' if where == _where(site) else ''}passes "
                                         f"{', '.join(vals)}" for where, vals in differ.items()) + \
                    " (the first is evaluated)"
            notes.append(note)
        return tuple(out), notes


def _key(r: ResolvedLaunch) -> tuple[Any, ...]:
    return (r.block, r.grid, r.dynamic_smem, tuple(sorted(r.params, key=lambda p: p[0])))


def _where(site: str | None) -> str:
    path, _, line = (site or "?:?").rpartition(":")
    return f"line {line} of {os.path.basename(path)}"


def _closure(start: str, includes: Mapping[str, tuple[str, ...]]) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for f in includes.get(todo.pop(), ()):
            if f not in seen:
                seen.add(f)
                todo.append(f)
    return seen


def _visible(site_file: str, name: str, defs: list[Kernel], includes: Mapping[str, tuple[str, ...]],
             real: Callable[[str], str] = os.path.realpath) -> list[Kernel]:
    """The definitions of kernel ``name`` a launch in ``site_file`` can mean: the only one, else
    those in the same file or in a file it includes, else those in a file that shares with it a
    header declaring the kernel, or (separate compilation) in its folder. ``real``: os.path.realpath."""
    if len(defs) == 1:
        return defs
    mine = _closure(site_file, includes)
    own = [k for k in defs if real(k.file) == site_file or real(k.file) in mine]
    if own:  # the unit's own definition (or one it includes) is the one its launch means
        return own
    out = []
    for k in defs:
        d = real(k.file)
        shared = (mine & _closure(d, includes)) if includes else set()
        if (d == site_file or d in mine or os.path.dirname(d) == os.path.dirname(site_file)
                or any(name in source_text(h) for h in shared)):
            out.append(k)
    return out


def resolve_models(models: Iterable[SourceModel], root: str | None = None,
                   includes: Mapping[str, tuple[str, ...]] | None = None) -> LaunchTable:
    """The table of every launch in ``models`` of every kernel they define, each site joined to the
    definitions visible from its file (:func:`_visible`; ``includes``: the project's include graph)."""
    from cudalens.gc_pause import collector_paused
    from cudalens.project.host_code import _SHARED, scopes_kept, shared_constants

    models = list(models)
    token = _SHARED.set(MappingProxyType(shared_constants(models)))
    try:  # (many short-lived values, freed by reference counting: the cycle collector's passes found none)
        with collector_paused(), scopes_kept():  # each model's scope built once, with the shared constants
            return _resolve_models(models, root, includes)
    finally:
        _SHARED.reset(token)


def _resolve_models(models: list[SourceModel], root: str | None,
                    includes: Mapping[str, tuple[str, ...]] | None) -> LaunchTable:
    from cudalens.project.sites import model_sites

    defs: dict[str, list[Kernel]] = {}
    for m in models:
        for k in m.kernels:
            defs.setdefault(k.name, []).append(k)
    try:  # host functions that launch (directly or through other wrappers), and the values their callers pass
        callers = _callers(models)
    except Exception:  # noqa: BLE001 - without callers a wrapper's parameters stay unknown
        callers = {}
    sites: dict[tuple[str, str], list[ResolvedLaunch]] = {}
    real = functools.cache(os.path.realpath)  # (each file's, asked for each launch)
    visible: dict[tuple[str, str], list[Kernel]] = {}  # (site's file, kernel name) -> _visible's answer
    for m in models:
        here = real(m.path)
        try:
            found = model_sites(m, {n: ks[0] for n, ks in defs.items()}, root, callers)
        except Exception:  # noqa: BLE001 - one unreadable file keeps the others' launches
            continue
        memo: dict[tuple[str, str], list[ResolvedLaunch]] = {}
        for r in found:
            if (here, r.kernel) not in visible:
                visible[here, r.kernel] = _visible(here, r.kernel, defs[r.kernel], includes or {}, real)
            for k in visible[here, r.kernel]:
                mine = r if k is defs[r.kernel][0] else _rebind(r, k, m, root, callers, memo)
                if mine is not None:
                    sites.setdefault((r.kernel, real(k.file)), []).append(mine)
    return LaunchTable(MappingProxyType({k: tuple(v) for k, v in sites.items()}), root)


#: wrapper levels followed from a launch up to the calls that give its values (main -> dispatch -> launcher)
WRAPPER_DEPTH = 4


def _callers(models: list[SourceModel]) -> dict[tuple[str, str], list[tuple[tuple[Any, ...], bool]]]:
    """Per host function (its file's path, its name) that launches a kernel, directly or by calling such a function (``main``
    calls ``softmax_forward(k, ..., block_size)``, which calls ``softmax_forward1(..., block_size)``,
    which launches): the argument tuples its calls pass, each calling function evaluated once per
    tuple its own callers pass (:func:`cudalens.project.sites.call_values`), to :data:`WRAPPER_DEPTH`
    levels."""
    from cudalens.project.chains import call_values, host_calls, ordered

    calls = [host_calls(m) for m in models]
    wrappers = {n: p for c in calls for n, (p, _called, launches) in c.items() if launches and n and n != "main"}
    if not wrappers:
        return {}
    for _ in range(WRAPPER_DEPTH):
        grew = {n: p for c in calls for n, (p, called, _l) in c.items()
                if n and n != "main" and n not in wrappers and called & wrappers.keys()}
        if not grew:
            break
        wrappers.update(grew)
    # one round gives every call's values; more only where a wrapper calls a wrapper (its seeds change)
    nested = any(n in wrappers and called & wrappers.keys() for c in calls for n, (_p, called, _l) in c.items())
    # a call in a file that defines the function means that one; else every other definition
    defined: dict[str, list[str]] = {}
    for m, c in zip(models, calls):
        for n in c:
            defined.setdefault(n, []).append(m.path)
    callers: dict[tuple[str, str], list[tuple[tuple[Any, ...], bool]]] = {}
    for _ in range(WRAPPER_DEPTH):
        new: dict[tuple[str, str], list[tuple[tuple[Any, ...], bool]]] = {}
        for m, c in zip(models, calls):
            for n, got in call_values(m, wrappers, callers).items():
                for target in ([m.path] if n in c else defined.get(n, [])):
                    new.setdefault((target, n), []).extend(got)
        new = {n: ordered(v) for n, v in new.items()}
        if new == callers:
            break
        callers = new
        if not nested:
            break
    return callers


def _rebind(r: ResolvedLaunch, k: Kernel, m: SourceModel, root: str | None, callers: Any,
            memo: dict[tuple[str, str], list[ResolvedLaunch]]) -> ResolvedLaunch | None:
    """``r`` for another definition of the same name (its own parameter names), with the same
    block and grid (a site in a loop has one launch per iteration); ``memo``: the sites of ``m``
    for ``k`` alone, by (kernel, file), kept by the caller for the model's other launches."""
    from cudalens.project.sites import model_sites

    key = (k.name, k.file)
    if key not in memo:
        memo[key] = model_sites(m, {k.name: k}, root, callers)
    for other in memo[key]:
        if other.site == r.site and (other.block, other.grid) == (r.block, r.grid):
            return other
    return None


def _relevant(project: Any, paths: list[str]) -> list[str]:
    """The files whose launches can reach the analysed ``paths``: those paths, what they include,
    what includes them, and the files of their folders (separate compilation)."""
    given = list(dict.fromkeys(os.path.realpath(p) for p in paths))  # in the order given: the table's
    folders = {os.path.dirname(p) for p in given}  # first definitions (and so its figures) follow it, never a hash
    out = set(given)
    for p in given:
        out |= _closure(p, project.includes)
        out |= set(project.includers(p))
    out |= {f for f in project.files if os.path.dirname(f) in folders}
    for f in list(out):  # the includers' own headers hold the runner's declarations
        out |= _closure(f, project.includes)
    return [f for f in dict.fromkeys([*project.files, *given]) if f in out]


def resolve_project(project: Any, build: Any = None, extra: Iterable[str] = ()) -> LaunchTable:
    """The launch table of ``project`` (a :class:`cudalens.project.tree.Project`) for the analysed
    files ``extra`` (every project file when none is given): every file whose launches can reach
    them (:func:`_relevant`) parsed with the macros its build and its headers give it."""
    from cudalens.project.chains import host_calls
    from cudalens.source.parse import parse_file

    models = []
    extra = list(extra)
    later: list[str] = []

    def parse(f: str) -> None:
        try:
            predefined = tuple(build.header_macros(f).items()) if build is not None else ()
            models.append(parse_file(f, predefined, forced=build.forced_macros(f) if build is not None else (),
                                     signatures_only=True))
        except Exception:  # noqa: BLE001 - a file the front end rejects has no launches to give
            pass

    for f in (_relevant(project, extra) if extra else project.files):
        text = source_text(f)
        if not text:
            continue
        if not (extra or "__global__" in text or "<<" in text or "cudaLaunch" in text):
            later.append(f)  # (the files relevant to analysed ones are all read: they may call a launching wrapper)
            continue
        parse(f)
    names = {n for m in models for n, (_p, _c, launches) in host_calls(m).items()
             if launches and n and n != "main"} if later else set()
    for f in later:  # files without a kernel or a launch that call a launching wrapper
        if names and any(n in source_text(f) for n in names):
            parse(f)
    return resolve_models(models, project.root, project.includes)
