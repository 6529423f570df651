"""The CUDA files a list of paths names: files as given, directories searched (``check``'s rule)."""

from __future__ import annotations

import os
from pathlib import Path

from cudalens.errors import InputError

CUDA_SUFFIXES = (".cu", ".cuh")


def cuda_files(directory: str) -> list[str]:
    """Every .cu/.cuh file under ``directory``, sorted; hidden directories and files are skipped."""
    root = Path(directory)
    if not root.exists():
        raise InputError(f"{directory}: no such directory")
    if not root.is_dir():
        raise InputError(f"{directory}: not a directory")
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found += [os.path.join(dirpath, f) for f in filenames if f.endswith(CUDA_SUFFIXES) and not f.startswith(".")]
    if not found:
        raise InputError(f"{directory}: no .cu or .cuh files found")
    return sorted(found)


def collect_paths(paths: list[str], exclude: tuple[str, ...] = ()) -> list[str]:
    """The CUDA files named by ``paths`` (files as given, directories searched), minus those
    matching an ``exclude`` glob (on the path as found, or on any of its directory names)."""
    import fnmatch

    def excluded(path: str) -> bool:
        norm = path.replace(os.sep, "/")
        parts = norm.split("/")
        return any(fnmatch.fnmatch(norm, g) or fnmatch.fnmatch(norm, "*/" + g.lstrip("./"))
                   or any(fnmatch.fnmatch(p, g) for p in parts) for g in exclude)

    found: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            try:
                found += [f for f in cuda_files(p) if not excluded(f)]
            except InputError:
                continue  # a directory without CUDA files is fine among others
        elif os.path.isfile(p):
            if not p.endswith(CUDA_SUFFIXES + (".h", ".hpp", ".cuh", ".inl")):
                raise InputError(f"{p}: not a CUDA source (.cu, .cuh, or a header)")
            if not excluded(p):
                found.append(p)
        else:
            raise InputError(f"{p}: no such file or directory")
    found = list(dict.fromkeys(found))
    if not found:
        raise InputError(f"{', '.join(paths)}: no .cu or .cuh files found" + (" (after --exclude)" if exclude else ""))
    return found
