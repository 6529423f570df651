"""A cache of whole file analyses, as ruff keeps one: an unchanged file costs a hash and a read.

A file's :class:`~cudalens.pipeline.analysis.FileAnalysis` (source model, compiled facts, kernel
records, findings, notes) is stored as one file per view (:mod:`cudalens.pipeline.result_entry`:
a signed manifest, then the pickle), named by a key of what is known before any work
(:func:`file_key`): the file's real path, the options that change results (compute capability,
``--block``, ``--define``, ``--instantiate``, compile or not, the build's flags and forced macros for
the file), the launch context the project model gives the file (the launches of the kernels it
defines, from the project's launch table), the toolchain's fingerprint, and the tool's version (its
version string and the size and time of each of its modules).

The manifest holds what proves the entry still holds (:mod:`cudalens.pipeline.result_deps`): the
**dependency list** (every file the analysis read: the compiler's list, the project headers whose
macros the source model reads, the include closure) and its digest, the **places** where a new file
would shadow one it includes, and the kernels this file defines with the kernels other analysed files
define that it mentions (a kernel defined elsewhere is left out of its compiled facts). A lookup
hashes each listed file once per run (a header 200 units share is hashed once), so an unchanged
tree is never walked or parsed again. A file that changed or vanished, or appeared where an include
would open it, is a miss for that file and every file whose analysis read it (its includers), and
for nothing else.

Three views are stored: ``full`` (the whole analysis: SARIF and HTML render it), ``json``
(:func:`json_view`: the kernel records already rendered as ``--format json`` writes them) and
``summary`` (:func:`summary_view`: what the text, concise and github formats print, without the
compiled facts and kernel records); ``ResultCache.view`` chooses, and a run where some file misses
reads the full view of every hit (a header may be compiled through a unit read from the cache).

The project's launch table, which every key depends on, is stored too (:func:`launch_table`), under
a digest of the files it parses with their headers as its dependency list, so a warm run parses
nothing. Writes are atomic (a temporary file, then ``os.replace``); an entry that cannot be read or
unpickled, or of another format, is a miss, never a crash. Results whose notes say the analysis hit a
time or memory budget are not stored (they depend on the machine's load). A file whose compile failed
is stored too, with what decides the failure (:mod:`cudalens.pipeline.failure_probes`): for a missing
header, the places it would have been found (a header appearing there is a miss: the compile is tried
again).

The folder is ``<cache_dir>/results`` (launch tables in ``results/launches``; ``$CUDALENS_CACHE_DIR``,
else ``$XDG_CACHE_HOME/cudalens``, else ``~/.cache/cudalens``), beside the compile cache's entries;
``cudalens cache info|clean`` reads and empties both. The entries are pickles, so each is signed
(:mod:`cudalens.pipeline.result_entry`); one another key signed is a miss, never unpickled.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudalens.compiled import cache as _compiled
from cudalens.gc_pause import collector_paused
from cudalens.pipeline.result_deps import digest
from cudalens.pipeline.result_entry import FORMAT, opened, sealed, unpickle

__all__ = ["FORMAT", "ResultCache", "clean", "consult", "file_key", "file_keys", "info", "launch_table",
           "stored_launch_table", "summary_view"]

_MISSING = ("No such file or directory", "cannot open source file", "could not open")  # a file not found
_UNSTABLE = ("budget of", "budget spent", "timed out", "compiled layer unavailable", "stopped at")
#: the formats that print no more than :func:`summary_view` keeps
SUMMARY_FORMATS = ("text", "concise", "github", "statistics")


def results_dir() -> Path:
    return _compiled.cache_dir() / "results"


@functools.lru_cache(maxsize=1)
def tool_version() -> str:
    """The version string and, for a development checkout, each module's size and modification time."""
    from cudalens._version import __version__

    h = hashlib.sha256(__version__.encode())
    root = Path(__file__).resolve().parents[1]  # the cudalens package
    for f in sorted(root.rglob("*.py")):
        try:
            st = f.stat()
        except OSError:
            continue
        h.update(f"\0{f.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return f"{__version__}+{h.hexdigest()[:16]}"


@functools.lru_cache(maxsize=1)
def _toolchain() -> tuple[str, tuple[str, ...]]:
    """(fingerprint, folders whose files are digested by size and time) of the toolchain in use."""
    try:
        from cudalens.compiled.toolchain import discover

        tc = discover()
        return tc.fingerprint(), tc.roots()
    except Exception:  # noqa: BLE001 - no toolchain: the analyses are source-only, keyed so
        return "none", ()


def launch_context(table: Any, path: str, real: str | None = None) -> str:
    """A digest of the launches the project's launch table gives the kernels ``path`` (real path
    ``real``) defines."""
    if table is None:
        return ""
    real = real or os.path.realpath(path)
    mine = sorted((k, v) for k, v in getattr(table, "sites", {}).items() if k[1] == real)
    return hashlib.sha256(repr((getattr(table, "root", None), mine)).encode()).hexdigest()


def file_key(path: str, *, options: Mapping[str, Any], build: Any, table: Any, compile: bool,
             real: str | None = None) -> str:
    """The key of ``path`` (real path ``real``) under ``options`` (see the module docstring)."""
    real = real or os.path.realpath(path)
    macros: tuple[Any, ...] = ()
    if build is not None:  # the whole build context (its compile_commands entries, config) and the file's share
        macros = (_build_digest(build), tuple(build.nvcc_flags(path)), tuple(build.forced_macros(path)))
    fingerprint = _toolchain()[0] if compile else "no-compile"
    text = repr((real, fingerprint, sorted((k, repr(v)) for k, v in options.items()), macros,
                 launch_context(table, path, real), compile, tool_version(), _environment() if compile else ()))
    return hashlib.sha256(FORMAT + text.encode()).hexdigest()


def _environment() -> tuple[str, ...]:
    """The environment variables that change every compile (include folders, nvcc's added flags)."""
    from cudalens.pipeline.failure_probes import INCLUDE_VARIABLES

    return tuple(os.environ.get(v, "") for v in (*INCLUDE_VARIABLES, "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"))


_BUILDS: dict[int, tuple[Any, str]] = {}


def _build_digest(build: Any) -> str:
    """A digest of ``build`` (a frozen BuildContext: include folders, flags, compile_commands entries,
    config), computed once per build object."""
    got = _BUILDS.get(id(build))
    if got is None or got[0] is not build:
        got = (build, hashlib.sha256(repr(build).encode()).hexdigest())
        _BUILDS.clear()
        _BUILDS[id(build)] = got
    return got[1]


def _table_key(cache: ResultCache, paths: Sequence[str], project: Any, build: Any) -> tuple[str, list[str]] | None:
    """(the key of the launch table of ``paths``, the files it parses): a digest of every file it parses
    (the files whose launches can reach ``paths``: project.resolve._relevant), the macros its build
    forces on each, the build context, the include graph and the tool's version; None when a file
    cannot be read. The headers that give each file its macros are the entry's dependency list
    (:mod:`cudalens.pipeline.result_deps`), as a file's analysis has them."""
    from cudalens.compiled.cache import _STAT_ROOTS
    from cudalens.pipeline.result_deps import part
    from cudalens.project.resolve import _relevant

    files = _relevant(project, list(paths)) if paths else list(project.files)
    roots = (*_STAT_ROOTS, *_toolchain()[1])
    h = hashlib.sha256(FORMAT + tool_version().encode())
    h.update(repr((project.root, sorted(project.includes.items()))).encode())
    if build is not None:
        h.update(_build_digest(build).encode())
    for f in files:
        try:
            h.update(part(f, roots, cache.digests))
            if build is not None:
                h.update(repr(build.forced_macros(f)).encode())
        except Exception:  # noqa: BLE001 - unreadable now: computed, never stored
            return None
    return h.hexdigest(), files


def stored_launch_table(cache: ResultCache, paths: Sequence[str], project: Any, build: Any) -> Any:
    """The stored launch table of ``paths`` if no file it reads changed (a hash and a read), else None."""
    return _stored_table(cache, _table_key(cache, paths, project, build))


def _stored_table(cache: ResultCache, keyed: tuple[str, list[str]] | None) -> Any:
    from types import MappingProxyType

    from cudalens.project.resolve import LaunchTable

    got = cache.entry(keyed[0], "launches") if keyed is not None else None
    table = unpickle(got[1]) if got is not None else None
    if isinstance(table, tuple) and len(table) == 2 and isinstance(table[0], dict):
        return LaunchTable(MappingProxyType(table[0]), table[1])
    return None


def launch_table(cache: ResultCache, paths: Sequence[str], project: Any, build: Any,
                 compute: Callable[[], Any]) -> Any:
    """The project's launch table for ``paths`` (``compute()``), read from ``cache`` when no file it
    reads changed (:func:`stored_launch_table`), else computed and stored: an unchanged project costs
    reading its files, not parsing them."""
    from cudalens.pipeline.result_deps import dependencies, probes

    keyed = _table_key(cache, paths, project, build)
    got = _stored_table(cache, keyed)
    if got is not None:
        return got
    table = compute()
    if keyed is None:
        return table
    deps = list(dict.fromkeys(d for f in keyed[1] for d in dependencies(f, None, project, build)))
    try:
        payload = pickle.dumps((dict(table.sites), table.root), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return table
    cache.write(keyed[0], "launches", {"deps": deps, "shadows": probes(keyed[1], build)}, payload)
    return table


def summary_view(fa: Any) -> Any:
    """What the summary formats (:data:`SUMMARY_FORMATS`) read of ``fa``: its source model, findings,
    notes and failure; the compiled facts and kernel records (most of a stored analysis) left out."""
    return dataclasses.replace(fa, compiled=None, kernels=())


def json_view(fa: Any) -> Any:
    """What ``--format json`` writes of ``fa``: the summary's parts, whether it compiled, and its kernel
    records already rendered (:func:`cudalens.pipeline.analysis.kernels_json`); the compiled facts'
    kernels, PTX and dependency list left out."""
    from cudalens.pipeline.analysis import kernels_json

    compiled = dataclasses.replace(fa.compiled, kernels={}, deps=(), ptx="") if fa.compiled is not None else None
    return dataclasses.replace(fa, compiled=compiled, kernels=(), kernels_json=kernels_json(fa))


@dataclass
class ResultCache:
    """The cache one analysis reads and fills; ``hits`` and ``misses`` name the files of each;
    ``view``: the stored view read when every file hits (``"summary"``: :func:`summary_view`,
    ``"json"``: :func:`json_view`; else the whole analysis).
    Once per run: ``walks`` (the repositories walked for stored failures), ``digests`` (the
    files read), ``places`` (whether each probed place exists), ``defined`` and
    ``every`` (:func:`consult`)."""

    directory: Path | None = None
    view: str = "full"
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    walks: dict[str, frozenset[str]] = field(default_factory=dict)
    digests: dict[str, bytes] = field(default_factory=dict)
    places: dict[str, bool] = field(default_factory=dict)
    defined: dict[str, frozenset[str]] = field(default_factory=dict)  # the kernels each analysed file defines
    every: frozenset[str] = frozenset()  # all of them

    def _dir(self) -> Path:
        return self.directory or results_dir()

    def _file(self, key: str, view: str) -> Path:
        return self._dir() / ("launches" if view == "launches" else "") / key[:2] / f"{key}.{view}"

    def entry(self, key: str, view: str) -> tuple[dict[str, Any], bytes] | None:
        """(manifest, payload) of the ``view`` stored under ``key`` if nothing it was computed from
        changed (its dependency list hashes as stored, no probed place appeared, a stored failure's
        header is still missing), else None."""
        from cudalens.pipeline.failure_probes import still_failing
        from cudalens.pipeline.result_deps import unshadowed

        got = opened(self._file(key, view))
        if got is None:
            return None
        manifest = got[0]  # written by this module (its signature says so): no field checked twice
        deps = manifest.get("deps")
        if not isinstance(deps, list):
            return None
        if "absent" in manifest and not still_failing(manifest, self.walks):
            return None  # a header the stored failure lacked has appeared: compiled again
        if not unshadowed(manifest.get("shadows"), self.places):
            return None  # a file appeared where an include would now open it
        if digest(key, deps, _toolchain()[1], self.digests) != manifest.get("digest"):
            return None
        return got

    def seen(self, bare: str) -> bool:
        """Whether an analysis was stored under ``bare``, a path's key with no launches (:func:`file_keys`
        with no table), whatever launches it had: where not, the file's analysis misses, whatever the
        launch table gives it (``check`` then compiles it while the table is resolved)."""
        return self._file(bare, "seen").exists()

    def mark_seen(self, bare: str) -> None:
        """Record that an analysis was stored under ``bare`` (an empty file: a crash leaves it or not)."""
        try:
            _compiled.atomic_write(self._file(bare, "seen"), b"")
        except OSError:
            pass

    def write(self, key: str, view: str, manifest: dict[str, Any], payload: bytes) -> bool:
        """Store ``payload`` as the ``view`` of ``key`` with ``manifest`` (its ``deps`` digested now);
        False when it cannot be (a listed file unreadable, no signing key, the folder not writable)."""
        got = digest(key, manifest["deps"], _toolchain()[1], self.digests)
        data = sealed({**manifest, "digest": got}, payload) if got is not None else None
        if data is None:
            return False
        try:
            _compiled.atomic_write(self._file(key, view), data)
        except OSError:
            return False  # a cache that cannot be written is no cache, never a failure
        return True

    def store(self, key: str, fa: Any, manifest: dict[str, Any], build: Any = None) -> tuple[str, ...] | None:
        """Store ``fa`` (both views) under ``key`` with ``manifest`` (its ``deps``, the ``shadows`` a new
        file would shadow, :func:`consult`'s kernel fields); not when it depends on the machine's load
        or no toolchain was found. A failure for a missing header is stored with the places the header
        would have been found (:func:`cudalens.pipeline.failure_probes.probes`). Returns the kernel
        records of the JSON view where it was rendered (None where it was not: the analysis is not
        stored then), also when a write failed."""
        from cudalens.pipeline.failure_probes import missing_of, probes

        failure = getattr(fa, "failure", None)
        if failure is not None and getattr(failure, "kind", "") == "toolchain":
            return None
        if any(w in n for n in (*fa.notes, *fa.model.problems) for w in _UNSTABLE):
            return None
        try:
            if fa.compiled is None and missing_of(fa):
                manifest = {**manifest, **probes(fa, manifest["deps"], build, _toolchain()[1], self.walks)}
            if fa.compiled is None and "absent" not in manifest and any(w in (fa.compile_error or "") for w in _MISSING):
                return None  # a file not found whose places cannot be named: never stored
        except (OSError, ValueError):
            return None
        try:
            rendered = json_view(fa)
            # the records rendered in the file's worker are stored in the JSON view only
            plain = dataclasses.replace(fa, kernels_json=None) if fa.kernels_json is not None else fa
            views = {"full": _pickled(plain), "summary": _pickled(summary_view(plain)), "json": _pickled(rendered)}
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return None
        for view, payload in views.items():
            if not self.write(key, view, manifest, payload):
                break
        return rendered.kernels_json


def _pickled(obj: Any) -> bytes:
    import io

    from cudalens.pipeline.isolated import _Pickler

    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)  # tree-sitter nodes left out
    return buf.getvalue()


def _entries(root: Path) -> dict[str, list[Path]]:
    """The cache's own files: the compile entries (``<2 hex digits>/*.json``) and the results folder;
    the folder's other tenants (tune builds, the trace injector) are left alone."""
    out: dict[str, list[Path]] = {"compiles": [], "results": []}
    if not root.is_dir():
        return out
    for child in root.iterdir():
        if child.is_dir() and len(child.name) == 2 and all(c in "0123456789abcdef" for c in child.name):
            out["compiles"] += [f for f in child.iterdir() if f.is_file()]
    results = root / "results"
    if results.is_dir():
        out["results"] += [f for f in results.rglob("*") if f.is_file()]
    return out


def info(directory: Path | None = None) -> dict[str, Any]:
    """Where the cache is, and the count and size of its compile and result entries."""
    root = directory or _compiled.cache_dir()
    out: dict[str, Any] = {"path": str(root)}
    for kind, files in _entries(root).items():
        sizes = []
        for f in files:
            try:
                sizes.append(f.stat().st_size)
            except OSError:
                continue
        out[f"{kind}_files"] = len(sizes)
        out[f"{kind}_bytes"] = sum(sizes)
    return out


def clean(directory: Path | None = None) -> int:
    """Remove the cache's compile and result entries; the number of files removed."""
    root = directory or _compiled.cache_dir()
    removed = 0
    for files in _entries(root).values():
        for f in files:
            try:
                f.unlink()
                removed += 1
            except OSError:
                continue
            for d in (f.parent, f.parent.parent):  # emptied folders (results/launches/xx, results/launches)
                if d != root and d != root / "results":
                    try:
                        d.rmdir()
                    except OSError:
                        break
    return removed


def file_keys(paths: Sequence[str], *, block: Any, defines: Mapping[str, Any], cc: str, compile: bool, build: Any,
              project: Any, table: Any, instantiate: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """Each path's :func:`file_key` under the run's options (``table`` None: the key with no launches,
    :meth:`ResultCache.seen`'s); a path whose key cannot be made is left out (analysed, not stored)."""
    from cudalens.project.context import is_header

    graph = project is not None and bool(project.includes)  # (without one, no file has includers)
    includers = {p: tuple(project.includers(p)) if graph and not is_header(p) else () for p in paths}
    units = tuple(p for p in paths if not is_header(p) and not includers[p])
    keys: dict[str, str] = {}
    for p in paths:
        options = {"block": block, "defines": sorted((k, repr(v)) for k, v in defines.items()), "cc": cc,
                   "instantiate": instantiate.get(p, ()), "includers": includers[p],
                   "through": () if p in units else units}
        try:
            keys[p] = file_key(p, options=options, build=build, table=table, compile=compile, real=os.path.realpath(p))
        except Exception:  # noqa: BLE001 - e.g. a refused compile_commands flag: the analysis says so, uncached
            continue
    return keys


def consult(cache: ResultCache, paths: Sequence[str], *, block: Any, defines: Mapping[str, Any], cc: str,
            compile: bool, build: Any, project: Any, table: Any, instantiate: Mapping[str, tuple[str, ...]],
            kernels: Callable[[str], frozenset[str]]) -> tuple[dict[str, Any], dict[str, str]]:
    """(the stored analyses of ``paths`` that are still valid, the key of every path).
    ``kernels``: the kernels a file defines, read from its text (asked only of files that miss: a
    hit's are in its manifest); a file's compiled facts leave out those another analysed file defines,
    so an entry holds only while the ones its files mention are the same. ``instantiate``: the
    templates each file instantiates."""
    from cudalens.pipeline.analysis import FileAnalysis

    keys = file_keys(paths, block=block, defines=defines, cc=cc, compile=compile, build=build, project=project,
                     table=table, instantiate=instantiate)
    view = cache.view if cache.view in ("summary", "json") else "full"
    words: dict[str, frozenset[str]] = {}
    with collector_paused():  # over every lookup, not only each entry's unpickling
        found = {p: got for p in keys if (got := cache.entry(keys[p], view)) is not None}
        for p in paths:
            stored = found[p][0].get("kernels") if p in found else None
            ok = isinstance(stored, list) and all(isinstance(k, str) for k in stored)
            cache.defined[p] = frozenset(stored) if ok else kernels(p)  # type: ignore[arg-type]
        cache.every = frozenset().union(*cache.defined.values())
        found = {p: got for p, got in found.items() if _same_elsewhere(cache, p, got[0], project, words)}
        if view != "full" and len(found) < len(keys):  # some file is analysed: the hits in full
            found = {p: got for p in found if (got := cache.entry(keys[p], "full")) is not None
                     and _same_elsewhere(cache, p, got[0], project, words)}
        hits = {p: fa for p in found if isinstance(fa := unpickle(found[p][1]), FileAnalysis)}
    cache.hits += [p for p in keys if p in hits]
    cache.misses += [p for p in keys if p not in hits]
    return hits, keys


def _elsewhere(cache: ResultCache, p: str) -> frozenset[str]:
    """The kernels the other analysed files define (``cache.defined``) that ``p`` does not."""
    return cache.every - cache.defined.get(p, frozenset())


def _mentioned_elsewhere(cache: ResultCache, p: str, project: Any, words: dict[str, frozenset[str]]) -> list[str]:
    """Those of :func:`_elsewhere` ``p``'s compile can hold: the names its files mention."""
    names = _elsewhere(cache, p)
    return sorted(names & _mentioned(p, project, words) if project is not None else names)


def _names_digest(names: frozenset[str]) -> str:
    return hashlib.sha256("\0".join(sorted(names)).encode()).hexdigest()


def _same_elsewhere(cache: ResultCache, p: str, manifest: Mapping[str, Any], project: Any,
                    words: dict[str, frozenset[str]]) -> bool:
    """Whether the kernels other files define that ``p`` mentions are those it was stored with: at
    once when the other files define the same kernels as then, else by reading ``p``'s files' words."""
    if manifest.get("every") == _names_digest(_elsewhere(cache, p)):
        return True
    return manifest.get("elsewhere") == _mentioned_elsewhere(cache, p, project, words)


def _mentioned(path: str, project: Any, memo: dict[str, frozenset[str]]) -> frozenset[str]:
    """The identifiers of ``path`` and of the project files it includes (a kernel another analysed file
    defines reaches this file's compile only through them)."""
    import re

    from cudalens.project.resolve import _closure

    real = os.path.realpath(path)
    out: set[str] = set()
    for f in {real, *_closure(real, project.includes)}:
        if f not in memo:
            from cudalens.project.tree import source_text  # a FIFO or device is "" (never opened)

            memo[f] = frozenset(re.findall(r"[A-Za-z_]\w*", source_text(f)))
        out |= memo[f]
    return frozenset(out)
