"""The project model: its root, every translation unit and header, the include graph, and the
build's flags where the build states them plainly.

Root (:func:`find_root`): from the analysed path upwards, the first folder holding one of
``compile_commands.json``, ``build/compile_commands.json``, ``cudalens.toml``, a ``pyproject.toml``,
``CMakeLists.txt``, ``Makefile``/``makefile`` or ``.git``; a folder named on the command line
(``check DIR``) is its own root. A root holding more than :data:`MAX_FILES` sources is too wide to
be one program: the analysed file's own folder is used instead.

Build flags (:func:`build_flags`): a compilation database found automatically
(``compile_commands.json`` or ``build/compile_commands.json`` under the root, or ``-p DIR`` as
clang-tidy has it); otherwise the ``-D``, ``-I`` and ``-arch`` values written in the root's
Makefile (in the recipes of the target make builds by default: :mod:`cudalens.project.makefile`)
or CMakeLists.txt, with make/CMake variables substituted where they are set to plain text
(``BLOCK_SIZE ?= 16`` ... ``-DBLOCK_SIZE=$(BLOCK_SIZE)``). Neither make nor cmake is ever run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

from cudalens.project.makefile import default_build_text, substitute
from cudalens.source.parse import source_text  # noqa: F401 - the guarded reader, re-exported here

SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
HEADER_SUFFIXES = (".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl", ".inc")
MAX_FILES = 2000
_MARKERS = ("compile_commands.json", "build/compile_commands.json", "cudalens.toml", "pyproject.toml",
            "CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", ".git")
_SKIP_DIRS = {"node_modules", "__pycache__", "CMakeFiles"}
_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)


@dataclass(frozen=True)
class BuildFlags:
    """What the build says about compiling the project (plain text reading only)."""

    defines: tuple[str, ...] = ()  # NAME=VALUE or NAME
    include_dirs: tuple[str, ...] = ()  # absolute
    arch: str | None = None  # "sm_90"
    compile_commands: str | None = None  # the compilation database found, if any
    source: str = "none"  # "compile_commands.json", "Makefile", "CMakeLists.txt" or "none"


@dataclass(frozen=True)
class Project:
    root: str
    files: tuple[str, ...]  # every source and header under the root, absolute, sorted
    includes: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    build: BuildFlags = field(default_factory=BuildFlags)

    @property
    def units(self) -> tuple[str, ...]:
        return tuple(f for f in self.files if f.endswith(SOURCE_SUFFIXES))

    def includers(self, path: str) -> tuple[str, ...]:
        """The translation units that include ``path``, directly or through other files."""
        if not self.includes:  # no include graph: nothing includes anything (no path resolved for it)
            return ()
        real = os.path.realpath(path)
        out: list[str] = []
        seen = {real}
        todo = [real]
        while todo:
            for f in self._included_by.get(todo.pop(), ()):
                if f not in seen:
                    seen.add(f)
                    todo.append(f)
                    if f.endswith(SOURCE_SUFFIXES):
                        out.append(f)
        return tuple(sorted(out))

    @cached_property
    def _included_by(self) -> dict[str, list[str]]:
        rev: dict[str, list[str]] = {}
        for f, incs in self.includes.items():
            for i in incs:
                rev.setdefault(i, []).append(f)
        return rev


    def included_kernel_files(self, unit: str) -> tuple[str, ...]:
        """The project files ``unit`` includes, directly or not, that define kernels (``__global__``):
        analysed with it, their kernels are evaluated inside the unit that compiles them."""
        if not self.includes:  # no include graph: nothing included (no path resolved for it)
            return ()
        out: list[str] = []
        seen = {os.path.realpath(unit)}
        todo = list(seen)
        while todo:
            for f in self.includes.get(todo.pop(), ()):
                if f not in seen:
                    seen.add(f)
                    todo.append(f)
                    if "__global__" in source_text(f):
                        out.append(f)
        return tuple(out)


def find_root(start: str | Path, named: bool = False) -> Path:
    """The project folder of ``start`` (see the module docstring)."""
    here = Path(os.path.abspath(start))
    if named and here.is_dir():
        return here
    base = here if here.is_dir() else here.parent
    for folder in (base, *base.parents):
        if any((folder / m).exists() for m in _MARKERS):
            if _count_sources(folder) <= MAX_FILES:
                return folder
            break
    return base


def _count_sources(folder: Path) -> int:
    n = 0
    for _f in _walk(folder):
        n += 1
        if n > MAX_FILES:
            break
    return n


def _walk(folder: Path):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for f in sorted(filenames):
            if f.endswith(SOURCE_SUFFIXES + HEADER_SUFFIXES) and not f.startswith("."):
                yield os.path.join(dirpath, f)


def by_name(files: list[str] | tuple[str, ...]) -> dict[str, list[str]]:
    """``files`` indexed by base name (for :func:`repo_header`)."""
    out: dict[str, list[str]] = {}
    for f in files:
        out.setdefault(os.path.basename(f), []).append(f)
    return out


def repo_header(rel: str, including: str | Path, index: Mapping[str, list[str]]) -> str | None:
    """The project file a quoted ``#include "rel"`` of ``including`` means when no include folder
    holds it (cuda-samples' ``Common/helper_cuda.h``, named only by a sample's own Makefile): of the
    files of ``index`` (:func:`by_name`) whose path ends with ``rel``, the nearest to ``including``;
    None when none does. The compile looks the folder up the same way and names it in a note."""
    parts = Path(rel).parts
    if not parts or os.path.isabs(rel) or ".." in parts:
        return None
    start = os.path.dirname(os.path.realpath(including))
    found = [f for f in index.get(parts[-1], ()) if Path(f).parts[-len(parts):] == parts]

    def distance(f: str) -> tuple[int, str]:
        d = os.path.dirname(f)
        common = os.path.commonpath([d, start])
        return (len(Path(d).relative_to(common).parts) + len(Path(start).relative_to(common).parts), f)

    return min(found, key=distance) if found else None


def load_project(start: str | Path, named: bool = False, build_dir: str | None = None) -> Project:
    """The project holding ``start``: its files, include graph and build flags. A quoted include
    that no include folder holds is looked up among the project's files (:func:`repo_header`)."""
    root = find_root(start, named)
    files = tuple(os.path.realpath(f) for f in list(_walk(root))[:MAX_FILES])
    flags = build_flags(root, build_dir)
    dirs = [Path(d) for d in flags.include_dirs]
    known = set(files)
    index = by_name(files)
    includes: dict[str, tuple[str, ...]] = {}
    for f in files:
        found = []
        for rel in _INCLUDE_RE.findall(source_text(f)):
            for d in (Path(f).parent, *dirs, root):
                cand = os.path.realpath(d / rel)
                if cand in known:
                    found.append(cand)
                    break
            else:
                other = repo_header(rel, f, index)
                if other is not None:
                    found.append(other)
        includes[f] = tuple(dict.fromkeys(found))
    return Project(str(root), files, MappingProxyType(includes), flags)


def build_flags(root: str | Path, build_dir: str | None = None) -> BuildFlags:
    """The build's flags under ``root`` (see the module docstring)."""
    root = Path(root)
    for cand in ([Path(build_dir) / "compile_commands.json"] if build_dir else
                 [root / "compile_commands.json", root / "build" / "compile_commands.json"]):
        if cand.is_file():
            return BuildFlags(compile_commands=os.path.realpath(cand), source="compile_commands.json")
    for name in ("Makefile", "makefile", "GNUmakefile", "CMakeLists.txt"):
        text = source_text(root / name)
        if text:
            return _from_build_text(text, root, "CMakeLists.txt" if name.endswith(".txt") else "Makefile")
    return BuildFlags()


_CMAKE_SET = re.compile(r"\bset\s*\(\s*([A-Za-z_]\w*)\s+\"?([^\s\")]+)\"?[^)]*\)", re.IGNORECASE)
_CMAKE_DEFS = re.compile(r"\b(?:add_compile_definitions|target_compile_definitions)\s*\(([^)]*)\)", re.IGNORECASE)
_CMAKE_INCS = re.compile(r"\b(?:include_directories|target_include_directories)\s*\(([^)]*)\)", re.IGNORECASE)
_CMAKE_ARCH = re.compile(r"CUDA_ARCHITECTURES\s+\"?(\d+)")


def _from_build_text(text: str, root: Path, kind: str) -> BuildFlags:
    if kind == "Makefile":  # the recipes of the target make builds by default
        text = default_build_text(text)
    else:
        text = re.sub(r"\\\r?\n", " ", re.sub(r"#[^\n]*", "", text))
        variables: dict[str, str] = {}
        for m in _CMAKE_SET.finditer(text):
            variables.setdefault(m.group(1), m.group(2))
        text = substitute(text, variables)
    defines: list[str] = []
    incs: list[str] = []
    arch = None
    for m in re.finditer(r"(?<![\w-])-D[ \t]*([A-Za-z_]\w*(?:=[^\s\"')]*)?)", text):
        if "$" not in m.group(1):
            defines.append(m.group(1))
    for m in re.finditer(r"(?<![\w-])-I[ \t]*([^\s\"')$]+)", text):
        incs.append(m.group(1))
    if kind != "Makefile":
        for m in _CMAKE_DEFS.finditer(text):
            words = m.group(1).split()
            defines += [w[2:] if w.startswith("-D") else w for w in words if re.match(r"-?D?[A-Za-z_]\w*=", w) or
                        (w.startswith("-D") and len(w) > 2)]
        for m in _CMAKE_INCS.finditer(text):
            incs += [w for w in m.group(1).split() if w not in ("PUBLIC", "PRIVATE", "INTERFACE", "SYSTEM",
                                                                   "BEFORE", "AFTER") and "$" not in w
                     and not w.startswith("<")]
        a = _CMAKE_ARCH.search(text)
        arch = f"sm_{a.group(1)}" if a else None
    a2 = re.search(r"(?:-arch|--gpu-architecture)[= \t]+(?:sm_|compute_)(\d+)", text)
    if a2:
        arch = f"sm_{a2.group(1)}"
    dirs = []
    for d in incs:
        p = Path(os.path.realpath(root / d))
        if p.is_dir():
            dirs.append(str(p))
    return BuildFlags(tuple(dict.fromkeys(defines)), tuple(dict.fromkeys(dirs)), arch, None, kind)
