"""What decides a compile failure, so the result cache can keep it (issue #29).

A file whose compile failed has no dependency list from the compiler (a failed compile leaves none), and
a failure for a **missing header** is undone by a file appearing that none of its files names: the
header installed in an include folder, in the toolkit, or into the repository (where
:func:`cudalens.pipeline.compile_failure.retry_folder` would find it). So such a failure is stored
with, beside its dependency list (the file, the project headers it includes, the file the error
is in):

- ``absent``: every place the compiler (or its retry) would have found the header: the header's
  name under the folder of each file on the list, the ``-I``/``-isystem`` folders of the build, the
  toolkit's include folders, the host compiler's system folders and those of ``CPATH``-style
  variables; each was absent when the failure was stored. One of them existing is a miss.
- ``repository``: (root, file name) for a header of the project's own kind (not a library's): the
  repository the retry searches held no file of that name. One appearing anywhere in it is a miss.

The lookup costs a ``stat`` per place and, when some stored failure names a repository, one bounded
walk of it per run (the same bounds the retry's search has; the run's memo is the caller's). The
host compiler's folders are asked once per process.
"""

from __future__ import annotations

import functools
import glob
import os
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

#: environment variables that add include folders to every compile
INCLUDE_VARIABLES = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH")


def missing_of(fa: Any) -> str | None:
    """The header ``fa``'s compile could not open, or None (it compiled, or failed for another reason)."""
    from cudalens.pipeline.compile_failure import missing_header

    failure = getattr(fa, "failure", None)
    if failure is not None and failure.missing:
        return str(failure.missing)
    error = getattr(fa, "compile_error", None)
    return missing_header(error) if error else None


def failure_deps(fa: Any, build: Any) -> list[str]:
    """Files beside the project's include closure a failed compile read: the file its first error is
    in, and the project headers the build's include folders give it."""
    out: list[str] = []
    failure = getattr(fa, "failure", None)
    if failure is not None and failure.file and os.path.isfile(failure.file):
        out.append(os.path.realpath(failure.file))
    if build is not None:
        try:
            out += [os.path.realpath(h) for h in build.project_includes(fa.model.path)]
        except Exception:  # noqa: BLE001 - an unreadable header: the closure alone
            pass
    return out


def probes(fa: Any, deps: Sequence[str], build: Any, toolchain_roots: Sequence[str],
           memo: dict[str, frozenset[str]]) -> dict[str, Any]:
    """The manifest fields of a failure for a missing header (see the module docstring); {} for any
    other analysis. ``memo``: the run's repository walks (:func:`repository_names`)."""
    from cudalens.pipeline.compile_failure import library_of, project_root

    header = missing_of(fa)
    if not header or os.path.isabs(header) or ".." in header.split("/"):
        return {}
    path = fa.model.path
    folders = [os.path.dirname(d) for d in deps]
    failure = getattr(fa, "failure", None)
    if failure is not None and failure.file:
        folders.append(os.path.dirname(os.path.realpath(failure.file)))
    if build is not None:
        folders += [os.path.abspath(d) for d in build.search_dirs(path)]
    folders += toolkit_folders(tuple(toolchain_roots)) + list(host_folders())
    folders += [d for v in INCLUDE_VARIABLES for d in os.environ.get(v, "").split(os.pathsep) if d]
    absent = sorted({p for d in dict.fromkeys(folders) if not os.path.lexists(p := os.path.join(d, header))})
    out: dict[str, Any] = {"absent": absent}
    if library_of(header) is None:
        root = str(project_root(path).resolve())
        name = os.path.basename(header)
        if name not in repository_names(root, memo):
            out["repository"] = [root, name]
    return out


def still_failing(manifest: Mapping[str, Any], memo: dict[str, frozenset[str]]) -> bool:
    """Whether nothing the stored failure lacked has appeared (True for an entry with no probes)."""
    absent = manifest.get("absent", ())
    if not isinstance(absent, list) or any(not isinstance(p, str) or os.path.lexists(p) for p in absent):
        return False
    repo = manifest.get("repository")
    if repo is None:
        return True
    if not (isinstance(repo, list) and len(repo) == 2 and all(isinstance(x, str) for x in repo)):
        return False
    return repo[1] not in repository_names(repo[0], memo)


@functools.lru_cache(maxsize=8)
def toolkit_folders(roots: tuple[str, ...]) -> list[str]:
    """The include folders nvcc adds of each toolchain root (``include``, ``include/cccl``, and the
    ``targets/*/include`` ones of a system toolkit)."""
    out: list[str] = []
    for r in roots:
        for pattern in ("include", "include/cccl", "targets/*/include", "targets/*/include/cccl"):
            out += sorted(glob.glob(os.path.join(r, pattern)))
    return out


@functools.lru_cache(maxsize=1)
def host_folders() -> tuple[str, ...]:
    """The host C++ compiler's system include folders (``-E -v``), once per process; the usual
    ones when it cannot be asked."""
    usual = ("/usr/local/include", "/usr/include")
    try:
        from cudalens.compiled.toolchain import discover

        cxx = discover().host_compiler
    except Exception:  # noqa: BLE001 - no toolchain: no compile, the usual folders
        cxx = None
    if not cxx:
        return usual
    try:
        proc = subprocess.run([cxx, "-xc++", "-E", "-v", os.devnull], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return usual
    lines = proc.stderr.splitlines()
    try:
        start = lines.index("#include <...> search starts here:") + 1
        end = lines.index("End of search list.", start)
    except ValueError:
        return usual
    return tuple(dict.fromkeys([*(ln.strip() for ln in lines[start:end]), *usual]))


def repository_names(root: str, memo: dict[str, frozenset[str]]) -> frozenset[str]:
    """The file names under ``root``, walked as :func:`~cudalens.pipeline.compile_failure.find_in_repository`
    walks it (hidden folders skipped, no link followed, the same bounds); once per root in ``memo``
    (one run's: files may appear between runs)."""
    got = memo.get(root)
    if got is not None:
        return got
    from cudalens.pipeline.compile_failure import MAX_DEPTH, MAX_FILES

    names: set[str] = set()
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        depth = dirpath[len(root):].count(os.sep)
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and depth < MAX_DEPTH
                       and not os.path.islink(os.path.join(dirpath, d))]
        seen += len(filenames) + len(dirnames)
        if seen > MAX_FILES:
            break
        names.update(filenames)
    memo[root] = frozenset(names)
    return memo[root]
