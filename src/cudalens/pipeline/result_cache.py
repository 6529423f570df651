"""A cache of whole file analyses, as ruff keeps one: an unchanged file costs a hash and a read.

A file's :class:`~cudalens.pipeline.analysis.FileAnalysis` (source model, compiled facts, kernel
records, findings, notes) is stored in two levels, the compile cache's (:mod:`cudalens.compiled.cache`,
whose manifest, digest and atomic writes this module reuses):

1. a **manifest**, keyed by what is known before any work (:func:`file_key`): the file's real path,
   the options that change results (compute capability, ``--block``, ``--define``, ``--instantiate``,
   compile or not, the build's flags and macros for the file, the kernels other analysed files define),
   the launch context the project model gives the file (the launches of the kernels it defines, from
   the project's launch table), the toolchain's fingerprint, and the tool's version (its version
   string and the size and time of each of its modules). It records the dependency list of the last
   analysis: the files the compiler read (``nvcc -MD``; for a file that did not compile, the file and
   what it includes in the project's include graph);
2. the **result**, keyed by the manifest key plus the digest of every file on that list, stored as a
   pickle behind a header naming this module's storage format.

The project's launch table, which every key depends on, is stored too (:func:`launch_table`), under a
digest of the files it is computed from, so a warm run parses nothing.

A file that changed, vanished or appeared on an include path read earlier changes the digest: that
file and every file whose compile read it (its includers) miss, and nothing else. Writes are atomic
(a temporary file, then ``os.replace``); an entry that cannot be read or unpickled, or of another
format, is a miss, never a crash. Results whose notes say the analysis hit a time or memory budget
are not stored (they depend on the machine's load). A file whose compile failed is stored too, with
what decides the failure (:mod:`cudalens.pipeline.failure_probes`): for a missing header, the places
it would have been found (a header appearing there is a miss: the compile is tried again).

The folder is ``<cache_dir>/results`` (launch tables in ``results/launches``; ``$CUDALENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/cudalens``, else
``~/.cache/cudalens``), beside the compile cache's entries; ``cudalens cache info|clean`` reads and empties
both. The entries are pickles, so each is signed (HMAC-SHA256) with a key the folder does not hold:
``$CUDALENS_CACHE_KEY`` (a CI secret, so a persisted cache stays usable across runners), else a random
key made once in ``$XDG_CONFIG_HOME/cudalens/cache.key`` (``~/.config``; mode 0600). An entry whose
signature does not match (written by someone else, or restored from a cache that a pull request could
write) is a miss and is never unpickled.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import hmac
import os
import pickle
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudalens.compiled import cache as _compiled

FORMAT = b"cudalens-result/2\n"  # the storage format: this header, the HMAC of the pickle, then the pickle
_MISSING = ("No such file or directory", "cannot open source file", "could not open")  # a file not found
_UNSTABLE = ("budget of", "budget spent", "timed out", "compiled layer unavailable", "stopped at")


@functools.lru_cache(maxsize=1)
def _signing_key() -> bytes:
    """The key that signs this user's entries (see the module docstring); b"" when none can be had
    (then nothing is stored or read)."""
    given = os.environ.get("CUDALENS_CACHE_KEY")
    if given:
        return hashlib.sha256(given.encode()).digest()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "cudalens"
    path = base / "cache.key"
    try:
        if not path.exists():
            base.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # another process made it first
                pass
            else:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(os.urandom(32))
        data = path.read_bytes()
    except OSError:
        return b""
    return data[:32] if len(data) >= 32 else b""


def _sealed(payload: bytes) -> bytes | None:
    """The stored form of ``payload``: the format header, its signature, the payload (None: no key)."""
    key = _signing_key()
    return FORMAT + hmac.new(key, payload, hashlib.sha256).digest() + payload if key else None


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


def launch_context(table: Any, path: str) -> str:
    """A digest of the launches the project's launch table gives the kernels ``path`` defines."""
    if table is None:
        return ""
    real = os.path.realpath(path)
    mine = sorted((k, v) for k, v in getattr(table, "sites", {}).items() if k[1] == real)
    return hashlib.sha256(repr((getattr(table, "root", None), mine)).encode()).hexdigest()


def file_key(path: str, *, options: Mapping[str, Any], build: Any, table: Any, compile: bool) -> str:
    """The manifest key of ``path`` under ``options`` (see the module docstring)."""
    macros: tuple[Any, ...] = ()
    if build is not None:  # the whole build context (its compile_commands entries, config) and the file's share
        macros = (_build_digest(build), tuple(build.nvcc_flags(path)), _macros(build, path),
                  tuple(build.forced_macros(path)))
    fingerprint = _toolchain()[0] if compile else "no-compile"
    text = repr((sorted((k, repr(v)) for k, v in options.items()), macros, launch_context(table, path),
                 compile, tool_version(), _environment() if compile else ()))
    return _compiled.manifest_key(os.path.realpath(path), (), "result", fingerprint, extra=text)


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


_MACROS: dict[tuple[int, str], tuple[tuple[str, str], ...]] = {}


def _macros(build: Any, path: str) -> tuple[tuple[str, str], ...]:
    """``build.header_macros(path)`` (the macros of the project headers it includes), once per run."""
    if not _BUILDS or next(iter(_BUILDS.values()))[0] is not build:
        _build_digest(build)
        _MACROS.clear()
    key = (id(build), os.path.realpath(path))
    if key not in _MACROS:
        _MACROS[key] = tuple(sorted(build.header_macros(path).items()))
    return _MACROS[key]


def _table_file(cache: ResultCache, paths: Sequence[str], project: Any, build: Any) -> Path | None:
    """Where the launch table of ``paths`` is stored: under a digest of every file it reads (the files
    whose launches can reach ``paths``: project.resolve._relevant), the macros each is parsed with, the
    build context, the include graph and the tool's version; None when a file cannot be read."""
    from cudalens.project.resolve import _relevant

    files = _relevant(project, list(paths)) if paths else list(project.files)
    h = hashlib.sha256(FORMAT + tool_version().encode())
    h.update(repr((project.root, sorted(project.includes.items()))).encode())
    if build is not None:
        h.update(_build_digest(build).encode())
    for f in files:
        try:
            h.update(f"\0{f}\0".encode() + _content(cache, f))
            if build is not None:
                h.update(repr((_macros(build, f), build.forced_macros(f))).encode())
        except Exception:  # noqa: BLE001 - unreadable now: computed, never stored
            return None
    digest = h.hexdigest()
    return cache._dir() / "launches" / digest[:2] / f"{digest}.pickle"


def _content(cache: ResultCache, path: str) -> bytes:
    """The content digest of ``path``, read once per run (``cache.contents``)."""
    st = os.stat(path)
    seen = (path, st.st_size, st.st_mtime_ns, st.st_ino)
    if seen not in cache.contents:
        cache.contents[seen] = _compiled.content_digest(path)
    return cache.contents[seen]


def stored_launch_table(cache: ResultCache, paths: Sequence[str], project: Any, build: Any) -> Any:
    """The stored launch table of ``paths`` if no file it reads changed (a hash and a read), else None."""
    return _stored_table(_table_file(cache, paths, project, build))


def _stored_table(where: Path | None) -> Any:
    from types import MappingProxyType

    from cudalens.project.resolve import LaunchTable

    got = _read(where) if where is not None else None
    if isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], dict):
        return LaunchTable(MappingProxyType(got[0]), got[1])
    return None


def launch_table(cache: ResultCache, paths: Sequence[str], project: Any, build: Any,
                 compute: Callable[[], Any]) -> Any:
    """The project's launch table for ``paths`` (``compute()``), read from ``cache`` when no file it
    reads changed (:func:`stored_launch_table`), else computed and stored: an unchanged project costs
    reading its files, not parsing them."""
    where = _table_file(cache, paths, project, build)
    got = _stored_table(where)
    if got is not None:
        return got
    table = compute()
    if where is None:
        return table
    try:
        data = _sealed(pickle.dumps((dict(table.sites), table.root), protocol=pickle.HIGHEST_PROTOCOL))
        if data is not None:
            _compiled.atomic_write(where, data)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        pass
    return table


def dependencies(path: str, fa: Any, project: Any = None, build: Any = None) -> list[str]:
    """What ``fa`` was computed from: the compiler's dependency list when it compiled, else (source
    only) the file and what it includes (the project's include graph; for a failed compile also the
    file its error is in and the project headers the build's include folders give it)."""
    compiled = getattr(fa, "compiled", None)
    deps = list(getattr(compiled, "deps", ()) or ())
    real = os.path.realpath(path)
    if real not in deps:
        deps.insert(0, real)
    if compiled is None and project is not None:
        from cudalens.project.resolve import _closure

        deps += sorted(f for f in _closure(real, project.includes) if f not in deps)
    if compiled is None and getattr(fa, "failure", None) is not None:
        from cudalens.pipeline.failure_probes import failure_deps

        deps += [f for f in dict.fromkeys(failure_deps(fa, build)) if f not in deps]
    return deps


@dataclass
class ResultCache:
    """The cache one analysis reads and fills; ``hits`` and ``misses`` name the files of each
    (``walks``: the repositories walked for stored failures, ``digests``, ``contents``: the files read, once per run)."""

    directory: Path | None = None
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    walks: dict[str, frozenset[str]] = field(default_factory=dict)
    digests: dict[str, bytes] = field(default_factory=dict)
    contents: dict[tuple[str, int, int, int], bytes] = field(default_factory=dict)

    def _dir(self) -> Path:
        return self.directory or results_dir()

    def _result_file(self, digest: str) -> Path:
        return self._dir() / digest[:2] / f"{digest}.pickle"

    def lookup(self, path: str, key: str) -> Any | None:
        """The stored analysis of ``path`` if nothing it was computed from changed, else None."""
        from cudalens.pipeline.analysis import FileAnalysis

        fa = None
        from cudalens.pipeline.failure_probes import still_failing

        manifest = _compiled.load(key, self._dir())
        deps = manifest.get("deps") if isinstance(manifest, dict) else None
        if isinstance(manifest, dict) and "absent" in manifest and not still_failing(manifest, self.walks):
            deps = None  # a header the stored failure lacked has appeared: compiled again
        if isinstance(deps, list) and all(isinstance(d, str) for d in deps):
            digest = _compiled.deps_digest(key, deps, _toolchain()[1], self.digests)
            if digest is not None:
                fa = _read(self._result_file(digest))
        if not isinstance(fa, FileAnalysis):
            self.misses.append(path)
            return None
        self.hits.append(path)
        return fa

    def store(self, key: str, fa: Any, deps: Sequence[str], build: Any = None) -> None:
        """Store ``fa`` under ``key`` and ``deps``; not when it depends on the machine's load or no
        toolchain was found. A failure for a missing header is stored with the places the header
        would have been found (:func:`cudalens.pipeline.failure_probes.probes`)."""
        from cudalens.pipeline.failure_probes import missing_of, probes

        failure = getattr(fa, "failure", None)
        if failure is not None and getattr(failure, "kind", "") == "toolchain":
            return
        if any(w in n for n in (*fa.notes, *fa.model.problems) for w in _UNSTABLE):
            return
        digest = _compiled.deps_digest(key, deps, _toolchain()[1], self.digests)
        if digest is None:
            return
        manifest: dict[str, Any] = {"deps": list(deps)}
        try:
            if fa.compiled is None and missing_of(fa):
                manifest.update(probes(fa, deps, build, _toolchain()[1], self.walks))
            if fa.compiled is None and "absent" not in manifest and any(w in (fa.compile_error or "") for w in _MISSING):
                return  # a file not found whose places cannot be named: never stored
        except (OSError, ValueError):
            return
        try:
            import io

            from cudalens.pipeline.isolated import _Pickler

            buf = io.BytesIO()
            _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(fa)  # tree-sitter nodes left out
            data = _sealed(buf.getvalue())
            if data is None:
                return
            _compiled.atomic_write(self._result_file(digest), data)
            _compiled.store(key, manifest, self._dir())
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return  # a cache that cannot be written is no cache, never a failure


def _read(f: Path) -> Any:
    try:
        data = f.read_bytes()
    except OSError:
        return None
    key = _signing_key()
    if not key or not data.startswith(FORMAT):
        return None
    mac, payload = data[len(FORMAT):len(FORMAT) + 32], data[len(FORMAT) + 32:]
    if not hmac.compare_digest(mac, hmac.new(key, payload, hashlib.sha256).digest()):
        return None  # not signed with this user's key: never unpickled
    with _collector_paused():
        try:
            return pickle.loads(payload)  # noqa: S301 - signed by this user's key (see the module docstring)
        except Exception:  # noqa: BLE001 - a truncated or foreign entry is a miss
            return None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The garbage collector off inside: stored entries are many small objects and no garbage, and a
    collector pass while (or just after) they are read walks them all again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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


def consult(cache: ResultCache, paths: Sequence[str], *, block: Any, defines: Mapping[str, Any], cc: str,
            compile: bool, build: Any, project: Any, table: Any, instantiate: Mapping[str, tuple[str, ...]],
            kernels: Mapping[str, frozenset[str]]) -> tuple[dict[str, Any], dict[str, str]]:
    """(the stored analyses of ``paths`` that are still valid, the manifest key of every path).
    ``kernels``: the kernels each analysed file defines (a file's compiled facts leave out those
    another analysed file defines); ``instantiate``: the templates each file instantiates."""
    from cudalens.project.context import is_header

    includers = {p: tuple(project.includers(p)) if project is not None and not is_header(p) else () for p in paths}
    units = tuple(p for p in paths if not is_header(p) and not includers[p])
    every = frozenset().union(*kernels.values()) if kernels else frozenset()
    keys: dict[str, str] = {}
    words: dict[str, frozenset[str]] = {}
    for p in paths:
        elsewhere = every - kernels.get(p, frozenset())  # what the other files define (one set op, not n unions)
        if project is not None:  # only the names its compile can hold: those its files mention
            elsewhere &= _mentioned(p, project, words)
        options = {"block": block, "defines": sorted((k, repr(v)) for k, v in defines.items()), "cc": cc,
                   "instantiate": instantiate.get(p, ()), "elsewhere": sorted(elsewhere),
                   "includers": includers[p], "through": () if p in units else units}
        try:
            keys[p] = file_key(p, options=options, build=build, table=table, compile=compile)
        except Exception:  # noqa: BLE001 - e.g. a refused compile_commands flag: the analysis says so, uncached
            continue
    with _collector_paused():  # over every lookup, not only each entry's unpickling
        hits = {p: fa for p in keys if (fa := cache.lookup(p, keys[p])) is not None}
    return hits, keys


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


def fill(cache: ResultCache, done: Sequence[Any], keys: Mapping[str, str], hits: Mapping[str, Any],
         project: Any = None, build: Any = None) -> None:
    """Store each analysis of ``done`` that was computed now (not read from the cache)."""
    given = {os.path.realpath(p): p for p in keys}
    for fa in done:
        p = given.get(os.path.realpath(fa.model.path), "")
        if p in keys and p not in hits:
            cache.store(keys[p], fa, dependencies(p, fa, project, build), build)
