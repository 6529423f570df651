"""A cache of compile results keyed by the exact files the compiler read, so re-analysing an
unchanged file is instant and editing a header invalidates every file that includes it.

Two levels, as ccache's "direct mode" does:

1. A **manifest**, keyed by what is known before compiling: the analyzed file's path, the flags
   and defines, the compute capability, the toolchain fingerprint (each tool's path and version)
   and this cache's format version. It records the dependency list the compiler reported for the
   last compile (:func:`compile_deps`: every file the device compile's preprocessor opened, the file
   itself included).
2. A **result**, keyed by the manifest key plus a digest of every file on that list. Files of
   the project are digested by content; files under the toolchain's folder or the system's
   include folders by size and modification time (they change only with an install).

A lookup reads the manifest, digests its files again and loads the result of that digest; a
file that changed, vanished or was added to an include path read earlier changes the digest and
makes the lookup miss. Entries are JSON files written atomically (a temporary file in the same
folder, then ``os.replace``), so a crash leaves either the old entry or the new one; an
unreadable entry is a miss.

Location: ``$CUDALENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/cudalens``, else ``~/.cache/cudalens``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

FORMAT_VERSION = "5"  # 3: keyed by the compiler's dependency list (-MD); 4: kernels keep their shared load widths;
# 5: the list is the device compile's (compile_deps), no longer the host-side pass nvcc -MD adds
_STAT_ROOTS = ("/usr/include/", "/usr/lib/", "/usr/local/include/")


def cache_dir() -> Path:
    if os.environ.get("CUDALENS_CACHE_DIR"):
        return Path(os.environ["CUDALENS_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cudalens"


#: The dependency list is written by the device compile's own preprocessor (``gcc -E -MD`` through
#: ``-Xcompiler``), into this file of the compile's folder (nvcc's ``-MD`` would add a second, host-side
#: preprocessing pass: a sixth of nvcc's time on llm.c's units)
DEPFILE = "deps.d"
DEPENDENCY_FLAGS = ("-Xcompiler", f"-MD,-MF,{DEPFILE}")
_LINE_MARKER = re.compile(r'^# \d+ "((?:[^"\\]|\\.)*)"', re.M)


class RunMemo:
    """What one run of many compiles keeps of the files they share (``check``'s compile-ahead process: a
    unit's hundreds of headers are mostly the next unit's): each folder's and each named file's real path,
    each dependency's part of the digest (:func:`deps_digest`'s ``memo``). A file changed during the run is
    taken as it was first read, as the analyses' cache takes it for one run (pipeline.result_cache)."""

    def __init__(self) -> None:
        self.folders: dict[str, str] = {}  # a folder as named -> its real path, with a "/" at its end
        self.paths: dict[str, str] = {}  # a file as named (absolute) -> its real path
        self.digests: dict[str, bytes] = {}


def compile_deps(folder: str | Path, keep: str | Path | None = None, leave_out: str | Path | None = None,
                 memo: RunMemo | None = None) -> list[str]:
    """Every file the compile in ``folder`` (run with :data:`DEPENDENCY_FLAGS`, in that folder) read
    for its device code, as real paths in order, without ``leave_out`` (the generated wrapper). A host
    compiler that wrote no dependency file: the files named by the line markers of the preprocessed
    unit nvcc kept in ``keep`` (``*.cpp1.ii``). [] when neither is there.

    This is the one reader of the list: both caches (compile results here and whole analyses in
    cudalens.pipeline.result_cache) are keyed by what it returns. ``memo``: one run's (:class:`RunMemo`)."""
    base = Path(folder)
    try:
        deps = parse_depfile((base / DEPFILE).read_text(errors="replace"), base, memo)
    except OSError:
        deps = _marker_deps(keep, base, memo)
    if leave_out is None:
        return deps
    skip = os.path.realpath(leave_out)
    return [d for d in deps if d != skip]


def _marker_deps(keep: str | Path | None, base: Path, memo: RunMemo | None = None) -> list[str]:
    """The files named by the line markers of the kept device preprocessor output (``# 12 "a.h" 2``)."""
    for f in sorted(Path(keep).glob("*.cpp1.ii")) if keep is not None else ():
        try:
            text = f.read_text(errors="replace")
        except OSError:
            continue
        names = dict.fromkeys(re.sub(r"\\(.)", r"\1", m) for m in _LINE_MARKER.findall(text))
        return _real_paths((n for n in names if not n.startswith("<")), base, memo)
    return []


def parse_depfile(text: str, base: str | Path = ".", memo: RunMemo | None = None) -> list[str]:
    """The prerequisites of a make rule as ``gcc -MD`` writes it (``out: a.cu b.h \\``),
    resolved to real paths (links followed) relative to ``base``, in order, without repeats."""
    body = text.replace("\\\n", " ").replace("\\\r\n", " ")
    _, sep, rest = body.partition(": ")
    if not sep:
        return []
    tokens = _DEP_TOKEN.findall(rest) if "\\" in rest else rest.split()  # the same without escapes
    names = (_unescape(token) if "\\" in token or "$" in token else token for token in tokens)
    return _real_paths(names, base, memo)


_DEP_TOKEN = re.compile(r"(?:\\.|[^\s\\])+")
_ESCAPED = re.compile(r"\\(.)")


def _unescape(token: str) -> str:
    """A make prerequisite as the file's name: ``\\ `` is a space, ``$$`` a ``$``."""
    return _ESCAPED.sub(r"\1", token).replace("$$", "$")


def _real_paths(names: Iterable[str], base: str | Path, memo: RunMemo | None = None) -> list[str]:
    """``names`` as real paths relative to ``base``, in order, without repeats. Each folder is
    resolved once per call (a unit's hundreds of headers lie in a few dozen folders), or once per run
    with ``memo`` (which also keeps each name's real path); a name that is itself a link is resolved whole."""
    folders: dict[str, str] = memo.folders if memo is not None else {}
    known: dict[str, str] = memo.paths if memo is not None else {}
    out: dict[str, None] = {}
    base = os.path.abspath(base)  # the same real paths; each name's full path is absolute (a key for the run)
    for name in names:
        full = name if name.startswith("/") else os.path.join(base, name)
        real = known.get(full)
        if real is None:
            real = known[full] = _real_path(full, folders)
        out.setdefault(real, None)
    return list(out)


def _real_path(full: str, folders: dict[str, str]) -> str:
    """os.path.realpath(full), its folder's real path taken from (or kept in) ``folders``."""
    cut = full.rfind("/") + 1  # os.path.split, written out: it is called for each of 10^4 names
    folder, leaf = full[:cut], full[cut:]
    if folder and folder != "/" * len(folder):
        folder = folder.rstrip("/")
    if leaf in ("", ".", ".."):
        return os.path.realpath(full)
    real_folder = folders.get(folder)
    if real_folder is None:
        real_folder = os.path.realpath(folder)
        real_folder = folders[folder] = real_folder if real_folder.endswith("/") else real_folder + "/"
    real = real_folder + leaf  # os.path.join of the real folder and the leaf (no "/" in it)
    return os.path.realpath(real) if os.path.islink(real) else real


def manifest_key(path: str, flags: Iterable[str], cc: str, toolchain_fingerprint: str, extra: str = "") -> str:
    h = hashlib.sha256()
    h.update(f"cudalens-compiled/{FORMAT_VERSION}\0{cc}\0{toolchain_fingerprint}\0{extra}\0".encode())
    h.update("\0".join(flags).encode() + b"\0")
    h.update(str(Path(path).resolve()).encode() + b"\0")  # line info records the absolute path
    return h.hexdigest()


def deps_digest(key: str, deps: Sequence[str], stat_roots: Sequence[str] = (),
                memo: dict[str, bytes] | None = None) -> str | None:
    """The digest of ``deps`` under manifest ``key``; None when a file cannot be read. ``memo``: one
    run's part of each file (its size and time, or its content's digest), so a header many units
    include is read (or stat'ed) once per run."""
    h = hashlib.sha256(key.encode())
    roots = tuple(_STAT_ROOTS) + tuple(stat_roots)
    for dep in deps:
        part = memo.get(dep) if memo is not None else None
        if part is None:
            try:
                if dep.startswith(roots):
                    st = os.stat(dep)
                    part = f"\0{dep}\0{st.st_size}\0{st.st_mtime_ns}".encode()
                else:
                    part = b"\0" + dep.encode() + b"\0" + content_digest(dep)
            except OSError:
                return None
            if memo is not None:
                memo[dep] = part
        h.update(part)
    return h.hexdigest()


def lookup(key: str, stat_roots: Sequence[str] = (), directory: Path | None = None,
           memo: RunMemo | None = None) -> dict[str, Any] | None:
    """The stored result for manifest ``key`` if every file it depends on is unchanged, else None."""
    manifest = load(key, directory)
    if not manifest or not isinstance(manifest.get("deps"), list):
        return None
    digest = deps_digest(key, manifest["deps"], stat_roots, memo.digests if memo is not None else None)
    return load(digest, directory) if digest else None


def record(key: str, deps: Sequence[str], entry: dict[str, Any], stat_roots: Sequence[str] = (),
           directory: Path | None = None, memo: RunMemo | None = None) -> None:
    """Store ``entry`` for manifest ``key`` and dependency list ``deps`` (no-op if one is unreadable)."""
    digest = deps_digest(key, deps, stat_roots, memo.digests if memo is not None else None)
    if digest is None:
        return
    store(digest, entry, directory)
    store(key, {"deps": list(deps)}, directory)


def load(key: str, directory: Path | None = None) -> dict[str, Any] | None:
    """The cached entry for ``key``, or None (missing or unreadable)."""
    f = (directory or cache_dir()) / key[:2] / f"{key}.json"
    try:
        return json.loads(f.read_text())
    except (OSError, ValueError):
        return None


def store(key: str, entry: dict[str, Any], directory: Path | None = None) -> Path:
    """Write ``entry`` under ``key`` atomically; returns the file written."""
    final = (directory or cache_dir()) / key[:2] / f"{key}.json"
    atomic_write(final, json.dumps(entry).encode())
    return final


def content_digest(path: str | os.PathLike) -> bytes:
    """The SHA-256 of a regular file's bytes; for anything else (a FIFO or device named like a
    source, which would block or never end) a digest of what it is, without opening it. OSError
    for a file that is not there."""
    import stat

    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        return hashlib.sha256(f"not a regular file: mode {st.st_mode:o}".encode()).digest()
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.digest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the whole new one, never a
    part (flushed to disk before the rename: :func:`cudalens.textio.write_atomic_bytes`)."""
    from cudalens.textio import write_atomic_bytes

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic_bytes(path, data, sync=True)