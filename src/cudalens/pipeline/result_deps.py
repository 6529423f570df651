"""What a stored analysis (or launch table) was computed from, and what proves it still holds (issue #29).

An entry of the result cache is found under a key of what is known before any work and stored
under a digest of its **dependency list** (:func:`dependencies`): every file the analysis read, so
a warm run hashes each listed file (once per run, however many units share it) instead of walking
each unit's includes again. The list holds:

- the files the compiler read (the device preprocessor's ``-MD`` list, read through
  :func:`compiled_deps`, the one place that knows where a compile keeps it), for a unit and for a
  header compiled through one;
- the project headers the build's include folders give the file (the walk behind
  :meth:`cudalens.project.context.BuildContext.header_macros`, whose macros the source model
  reads; it follows includes the compiler may skip under ``#if``);
- the file's include closure in the project graph (whose words say which kernels of other files
  its compile can hold) and, for a failed compile, what the failure read
  (:func:`cudalens.pipeline.failure_probes.failure_deps`).

A file changing or vanishing changes the digest. A file **appearing** changes no listed file, so
each entry also keeps its **probes** (:func:`probes`): for every ``#include`` the walk meets, the
candidate places before the one that held it (the including file's folder, then the include
folders; all of them where none of the project's did, as for a toolkit header). A file at one of
them would be opened instead (it shadows the one read): the entry is a miss. The lookup costs one
``lstat`` per distinct place per run (:func:`unshadowed`). Not probed: the toolkit's and the
system's own lookups (their folders are keyed by size and time, and change with an install).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from typing import Any


def compiled_deps(fa: Any) -> list[str]:
    """Every file the compiler read for ``fa`` (the device preprocessor's ``-MD`` list), [] when it did not compile."""
    return list(getattr(getattr(fa, "compiled", None), "deps", ()) or ())


def _walked(build: Any, path: str) -> tuple[list[str], list[str]]:
    """(the project headers ``path`` includes, the places a new file would shadow one of them),
    from the build's include walk; ([], []) when it cannot be walked."""
    if build is None:
        return [], []
    try:
        headers, absent = build.include_probes(path)
    except Exception:  # noqa: BLE001 - an unreadable header: the compiler's list alone
        return [], []
    return [os.path.realpath(h) for h in headers], absent


def dependencies(path: str, fa: Any, project: Any = None, build: Any = None) -> list[str]:
    """What ``fa`` was computed from (see the module docstring), the file first, without repeats."""
    real = os.path.realpath(path)
    deps = [real, *compiled_deps(fa), *_walked(build, path)[0]]
    if project is not None:
        from cudalens.project.resolve import _closure

        deps += sorted(_closure(real, project.includes))
    if getattr(fa, "compiled", None) is None and getattr(fa, "failure", None) is not None:
        from cudalens.pipeline.failure_probes import failure_deps

        deps += failure_deps(fa, build)
    return list(dict.fromkeys(deps))


def probes(paths: Iterable[str], build: Any) -> list[str]:
    """The places where a file appearing would change what ``paths`` include (see the module
    docstring), each absent now; sorted, without repeats."""
    out: set[str] = set()
    for p in paths:
        out.update(_walked(build, p)[1])
    return sorted(p for p in out if not os.path.lexists(p))


def unshadowed(places: Any, memo: dict[str, bool]) -> bool:
    """Whether every one of a stored entry's ``places`` is still absent (``memo``: the run's
    answers); False for a malformed list."""
    if not isinstance(places, list):
        return False
    for p in places:
        if not isinstance(p, str):
            return False
        there = memo.get(p)
        if there is None:
            there = memo[p] = os.path.lexists(p)
        if there:
            return False
    return True



def part(dep: str, roots: tuple[str, ...], memo: dict[str, bytes]) -> bytes:
    """``dep``'s share of a digest, once per run (``memo``): its size and time under ``roots`` (the
    toolkit's and the system's folders, which change with an install), else its content's digest.
    OSError when it cannot be read."""
    got = memo.get(dep)
    if got is None:
        from cudalens.compiled import cache as _compiled

        if dep.startswith(roots):
            st = os.stat(dep)
            got = f"\0{dep}\0{st.st_size}\0{st.st_mtime_ns}".encode()
        else:
            got = b"\0" + dep.encode() + b"\0" + _compiled.content_digest(dep)
        memo[dep] = got
    return got


def digest(key: str, deps: list[str], stat_roots: tuple[str, ...], memo: dict[str, bytes]) -> str | None:
    """The digest of ``deps`` under ``key`` (:func:`part` of each); None when one cannot be read. A
    warm run finds most parts in ``memo`` (the toolkit's headers are shared by every unit)."""
    from cudalens.compiled.cache import _STAT_ROOTS

    parts = [memo.get(d) for d in deps]
    if None in parts:
        roots = (*_STAT_ROOTS, *stat_roots)
        try:
            parts = [p if p is not None else part(d, roots, memo) for p, d in zip(parts, deps)]
        except (OSError, TypeError, AttributeError):  # unreadable now, or not a path
            return None
    return hashlib.sha256(key.encode() + b"".join(parts)).hexdigest()  # type: ignore[arg-type]
