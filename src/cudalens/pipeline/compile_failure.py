"""A file that did not compile, said where and how to fix it (issue #26: no file silently source-only).

:class:`CompileFailure` is what every report format shows for such a file: the compiler's first
error (file and line), the header that was missing when that was the cause, and one fix:

- a **library header** (``cublas_v2.h``, ``cufft.h``, ``curand_kernel.h``, ...): the package or
  extra that installs it (:data:`LIBRARY_HEADERS`);
- an **include** no include folder holds (quoted, or a project header in angle brackets): the
  folder of the repository that has it (:func:`find_in_repository`; the compile is retried with
  it, see :func:`retry_folder`), or a request for the ``-I`` folder;
- anything else: the compiler's message, and the flags that change what the compiler sees.

Pure functions; the repository search is bounded (:data:`MAX_FILES` entries, :data:`MAX_DEPTH`
levels), skips hidden folders, follows no symbolic link and never leaves the project root.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudalens.errors import InputError, what_failed

_EXTRA = "pip install 'cudalens[cuda-libs]'"
#: header name prefix -> (library, what installs its headers)
LIBRARY_HEADERS: tuple[tuple[str, str, str], ...] = (
    ("cublasLt", "cuBLASLt", f"{_EXTRA} (nvidia-cublas)"),
    ("cublas", "cuBLAS", f"{_EXTRA} (nvidia-cublas)"),
    ("cufft", "cuFFT", f"{_EXTRA} (nvidia-cufft)"),
    ("curand", "cuRAND", f"{_EXTRA} (nvidia-curand)"),
    ("cusparse", "cuSPARSE", "pip install nvidia-cusparse (not in cudalens[cuda-libs]), or -I a CUDA toolkit's include"),
    ("cusolver", "cuSOLVER", "pip install nvidia-cusolver (not in cudalens[cuda-libs]), or -I a CUDA toolkit's include"),
    ("nvjpeg", "nvJPEG", "pip install nvidia-nvjpeg, or -I a CUDA toolkit's include"),
    ("npp", "NPP", "pip install nvidia-npp, or -I a CUDA toolkit's include"),
    ("cudnn", "cuDNN", "pip install nvidia-cudnn-cu12 (or -cu13), or -I cuDNN's include folder"),
    ("nccl", "NCCL", "pip install nvidia-nccl-cu12 (or -cu13), or -I NCCL's include folder"),
)
MAX_FILES = 20_000
MAX_DEPTH = 12
_MISSING_RES = (re.compile(r"^(?P<h>[^\s:]+(?:[^:]*?)): No such file or directory"),
                re.compile(r'cannot open source file "(?P<h>[^"]+)"'))
_QUOTED = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


@dataclass(frozen=True)
class CompileFailure:
    """Why ``path`` was analysed source-only, where the compiler said so, and the fix."""

    path: str  # the analysed file
    error: str  # the compiler's first error, one line
    fix: str
    file: str | None = None  # where the first error is (may be a header the file includes)
    line: int | None = None
    missing: str | None = None  # the header the compiler could not find
    kind: str = "compile-error"  # "compile-error" | "library-header" | "include-folder" | "toolchain"

    def message(self) -> str:
        """One line: what failed, that the file was analysed source-only, and the fix."""
        what = f"missing header {self.missing}" if self.missing else self.error
        return f"not compiled ({what}): analysed source-only, compiled-code figures missing. Fix: {self.fix}"

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "file": self.file, "line": self.line, "error": self.error,
                "missing": self.missing, "kind": self.kind, "fix": self.fix}


def missing_header(message: str) -> str | None:
    """The header a compiler message says it could not open, or None."""
    for rx in _MISSING_RES:
        m = rx.search(message.strip())
        if m:
            return m.group("h").strip()
    return None


def library_of(header: str) -> tuple[str, str] | None:
    """(library, how to install its headers) for a math/NVIDIA library header, else None."""
    name = Path(header).name
    for prefix, lib, fix in LIBRARY_HEADERS:
        if name.startswith(prefix):
            return lib, fix
    return None


def _quoted(file: str | None, line: int | None, header: str) -> bool:
    """Whether the include at ``file:line`` is ``#include "header"`` (unknown: assumed quoted)."""
    if not file or not line:
        return True
    try:
        with open(file, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    m = _QUOTED.match(text)
                    return m is not None and m.group(1) == header
    except OSError:
        return True
    return True


def project_root(path: str | Path) -> Path:
    """The repository holding ``path``: the nearest folder above it with ``.git``, a
    ``pyproject.toml``, a ``CMakeLists.txt`` at the top of a chain of them, or a Makefile;
    else ``path``'s own folder's parent."""
    here = Path(path).resolve().parent
    best: Path | None = None
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
        if best is None and any((d / f).is_file() for f in ("pyproject.toml", "Makefile", "CMakeLists.txt")):
            best = d
    return best or here.parent


def find_in_repository(header: str, path: str | Path, root: Path | None = None) -> str | None:
    """The folder under ``path``'s project root from which ``#include "header"`` resolves (the
    nearest to ``path`` when several do), or None. Bounded, hidden folders skipped, no link followed,
    nothing outside the root returned."""
    if os.path.isabs(header) or ".." in Path(header).parts:
        return None
    root = (root or project_root(path)).resolve()
    start = Path(path).resolve().parent
    parts = Path(header).parts
    found: list[Path] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        depth = len(Path(dirpath).relative_to(root).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and depth < MAX_DEPTH
                             and not os.path.islink(os.path.join(dirpath, d)))
        seen += len(filenames) + len(dirnames)
        if seen > MAX_FILES:
            break
        if parts[-1] in filenames:
            cand = Path(dirpath, parts[-1])
            base = Path(dirpath).parents[len(parts) - 2] if len(parts) > 1 else Path(dirpath)
            if len(parts) > 1 and Path(dirpath).parts[-(len(parts) - 1):] != parts[:-1]:
                continue
            real = cand.resolve()
            if cand.is_symlink() or not real.is_relative_to(root) or not real.is_file():
                continue
            found.append(base)
    if not found:
        return None

    def distance(d: Path) -> tuple[int, str]:
        common = os.path.commonpath([str(d), str(start)])
        return (len(d.relative_to(common).parts) + len(start.relative_to(common).parts), str(d))

    return str(min(found, key=distance))


def diagnose(path: str, error: str, file: str | None, line: int | None, searched: tuple[str, ...] = (),
             tried: str | None = None) -> CompileFailure:
    """The failure of ``path`` whose compiler's first error is ``error`` at ``file:line``.
    ``searched``: the include folders the compile had. ``tried``: a repository folder the compile
    was retried with, which did not help."""
    header = missing_header(error)
    if header is None:
        return CompileFailure(path, error, "give the flags the build uses (-I DIR, -D NAME=VALUE, --nvcc-flag, "
                              "--compile-commands build/compile_commands.json) or correct the code", file, line)
    lib = library_of(header)
    if lib is not None:
        return CompileFailure(path, error, f"{lib[0]} headers are not installed: {lib[1]}", file, line, header,
                              "library-header")
    where = f" (searched: {', '.join(searched)})" if searched else ""
    if _quoted(file, line, header):
        if tried:
            fix = f"{header} is in {tried}, but the compile still failed with it: check the build's other flags"
        else:
            fix = (f"no folder of the project holds {header}{where}: give its folder with -I DIR, or the build's "
                   "compile_commands.json with --compile-commands")
    else:
        folder = find_in_repository(header, path)
        fix = (f"give the folder that holds <{header}> with -I DIR{where}"
               + (f"; the project has it under {folder}" if folder else ""))
    return CompileFailure(path, error, fix, file, line, header, "include-folder")


def retry_folder(error: str, path: str, searched: tuple[str, ...]) -> tuple[str, str] | None:
    """(header, folder): an include the compile could not open, and the repository folder that
    holds it (not already searched); None when the error is another one, the header is a library's
    or no folder has it. Quoted includes first of all, but also ``<helper_cuda.h>``-style ones of
    the project's own headers (cuda-samples' Common): the folder is named in a note either way."""
    header = missing_header(error)
    if header is None or library_of(header) is not None:
        return None
    folder = find_in_repository(header, path)
    if folder is None or str(Path(folder).resolve()) in {str(Path(s).resolve()) for s in searched}:
        return None
    return header, folder


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else what_failed(exc)


def compile_or_diagnose(path: str, cc: str, defines: Mapping[str, Any], flags: tuple[str, ...],
                        searched: tuple[str, ...], *, through: str | None = None,
                        instantiate: tuple[str, ...] = (), disassembler: Any = None,
                        memo: Any = None) -> tuple[Any, list[str]]:
    """(CompileResult, notes), or for a file that does not compile (:class:`CompileFailure`, notes):
    its first error and the fix. An include no folder of ``searched`` holds is looked up in the
    repository (:func:`retry_folder`) and the compile retried with the folder found, named in a note
    (at most 3 folders). ``disassembler``, ``memo``: compile_file's. A refused flag or a missing file stays the user's
    error (InputError)."""
    try:
        from cudalens.compiled import CompileError, compile_file
    except Exception as exc:  # noqa: BLE001 - the compiled layer is optional
        return (CompileFailure(path, f"compiled layer unavailable ({what_failed(exc)})",
                               "reinstall cudalens with its compiled layer (`cudalens doctor` says what is missing)",
                               kind="toolchain"), [f"compiled layer unavailable ({what_failed(exc)}); source-only analysis"])
    notes: list[str] = []
    added: dict[str, str] = {}  # header -> the repository folder the compile was retried with
    while True:
        try:
            return compile_file(path, cc, {k: str(v) for k, v in defines.items()}, flags,  # defines already filtered
                                through=through, instantiate=instantiate, disassembler=disassembler, memo=memo), notes
        except InputError:
            raise
        except CompileError as exc:
            errors = [m for m in exc.messages if m.severity == "error"] or list(exc.messages)
            first = errors[0] if errors else None
            text = first.message if first is not None else _first_line(exc)
            retry = retry_folder(text, path, searched) if len(added) < 3 else None
            if retry is None:
                failure = diagnose(path, text, first.file if first else None, first.line if first else None,
                                   searched, tried=added.get(missing_header(text) or ""))
                return failure, [*notes, f"not compiled (compile error: {_first_line(exc)}); source-only analysis",
                                 f"fix: {failure.fix}"]
            header, folder = retry
            added[header] = folder
            flags, searched = (*flags, f"-I{folder}"), (*searched, folder)
            notes.append(f"include folder: {header} found in {folder}, which no -I names; compiled with -I {folder} "
                         "(add it to the build: -I, or include-dirs in [tool.cudalens])")
        except Exception as exc:  # noqa: BLE001 - ToolchainError: continue source-only
            return (CompileFailure(path, _first_line(exc), "install the toolchain (`cudalens doctor` gives the commands)",
                                   kind="toolchain"),
                    [*notes, f"not compiled ({what_failed(exc)}); source-only analysis"])
