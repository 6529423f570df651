"""A content-addressed cache of compile results, so re-analysing an unchanged file is instant.

The key hashes everything the result depends on: the file's bytes, the bytes of every
``#include "..."`` it can reach (searched next to the including file and in ``-I`` folders;
``<...>`` system headers are covered by the toolchain version instead), the defines and flags,
the compute capability, the toolchain fingerprint (each tool's path and version) and this cache's
format version. Entries are JSON files written atomically (a temporary file in the same folder,
then ``os.replace``), so a crash leaves either the old entry or the new one, never half of one; an
unreadable entry is treated as a miss.

Location: ``$CUDALENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/cudalens``, else ``~/.cache/cudalens``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterable

FORMAT_VERSION = "2"  # 2: shared loads classed by width (lds.32/64/128)
_INCLUDE_RE = re.compile(rb'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def cache_dir() -> Path:
    if os.environ.get("CUDALENS_CACHE_DIR"):
        return Path(os.environ["CUDALENS_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cudalens"


def visible_includes(path: Path, include_dirs: Iterable[Path] = ()) -> list[Path]:
    """Every quoted include reachable from ``path`` (recursively), in discovery order."""
    dirs = list(include_dirs)
    seen: set[Path] = set()
    order: list[Path] = []
    todo = [path]
    while todo:
        cur = todo.pop()
        try:
            data = cur.read_bytes()
        except OSError:
            continue
        for name in _INCLUDE_RE.findall(data):
            rel = name.decode(errors="replace")
            for d in [cur.parent, *dirs]:
                cand = (d / rel).resolve()
                if cand.is_file():
                    if cand not in seen:
                        seen.add(cand)
                        order.append(cand)
                        todo.append(cand)
                    break
    return order


def include_dirs_from_flags(flags: Iterable[str]) -> list[Path]:
    out: list[Path] = []
    flags = list(flags)
    for i, f in enumerate(flags):
        if f.startswith("-I") and len(f) > 2:
            out.append(Path(f[2:]))
        elif f in ("-I", "--include-path") and i + 1 < len(flags):
            out.append(Path(flags[i + 1]))
    return out


def make_key(path: Path, flags: Iterable[str], cc: str, toolchain_fingerprint: str) -> str:
    flags = list(flags)
    h = hashlib.sha256()
    h.update(f"cudalens-compiled/{FORMAT_VERSION}\0{cc}\0{toolchain_fingerprint}\0".encode())
    h.update("\0".join(flags).encode() + b"\0")
    h.update(str(path.resolve()).encode() + b"\0")  # line info records the absolute path
    h.update(path.read_bytes())
    for inc in visible_includes(path, include_dirs_from_flags(flags)):
        h.update(b"\0" + str(inc).encode() + b"\0" + inc.read_bytes())
    return h.hexdigest()


def load(key: str, directory: Path | None = None) -> dict[str, Any] | None:
    """The cached entry for ``key``, or None (missing or unreadable)."""
    f = (directory or cache_dir()) / key[:2] / f"{key}.json"
    try:
        return json.loads(f.read_text())
    except (OSError, ValueError):
        return None


def store(key: str, entry: dict[str, Any], directory: Path | None = None) -> Path:
    """Write ``entry`` under ``key`` atomically; returns the file written."""
    d = (directory or cache_dir()) / key[:2]
    d.mkdir(parents=True, exist_ok=True)
    final = d / f"{key}.json"
    fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{key[:8]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(entry, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return final
