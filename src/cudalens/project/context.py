"""The build context: how the project builds each file, the same for analyze, check and bench.

Sources, later ones added after earlier ones (so a command-line flag comes last and wins):

1. the configuration (``[tool.cudalens]``, see :mod:`cudalens.project.config`),
2. ``--compile-commands FILE`` (or the config's ``compile-commands``): the file's own recorded flags,
3. ``-I DIR``, ``-D NAME=VALUE`` and ``--nvcc-flag FLAG`` given on the command line.

Besides the compiler's flags, the context tells the source model what the compiler would see of
the project's own headers: :meth:`BuildContext.header_macros` collects the object-like macros and
integral constants of every project header a file includes (found with the same include paths,
recursively; the toolkit's and the system's headers are not read).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cudalens.errors import InputError
from cudalens.project.compile_commands import Entry, load_compile_commands
from cudalens.project.config import Config, find_config

HEADER_SUFFIXES = (".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl", ".inc")
_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(["<])([^">\n]+)[">]', re.MULTILINE)
_DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_CONST_RE = re.compile(
    r"^[ \t]*(?:static[ \t]+|inline[ \t]+)*(?:constexpr|const)[ \t]+(?:static[ \t]+)?"
    r"(?:unsigned[ \t]+|signed[ \t]+)?(?:int|long|short|size_t|unsigned|int32_t|uint32_t|int64_t|uint64_t|auto)"
    r"[ \t]+([A-Za-z_]\w*)[ \t]*=[ \t]*([^;{}\n]+);", re.MULTILINE)


@dataclass(frozen=True)
class BuildContext:
    """Include folders, macros and flags for compiling (and modelling) the project's files."""

    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()  # NAME or NAME=VALUE, from the config
    flags: tuple[str, ...] = ()  # further nvcc flags (config nvcc-flags, then --nvcc-flag)
    commands: Mapping[str, Entry] = field(default_factory=lambda: MappingProxyType({}))
    compile_commands: str | None = None
    config: Config = field(default_factory=Config)
    #: --trust-project-flags: flags from the repository may name programs (see project.flags)
    trusted: bool = False
    #: the project's root: a quoted include no folder holds is looked up among its files
    repo_root: str | None = None

    @cached_property
    def _repo_index(self) -> dict[str, list[str]]:
        from cudalens.project.tree import MAX_FILES, _walk, by_name

        if self.repo_root is None:
            return {}
        files: list[str] = []
        for f in _walk(Path(self.repo_root)):
            files.append(os.path.realpath(f))
            if len(files) >= MAX_FILES:
                break
        return by_name(files)

    def entry(self, path: str | Path) -> Entry | None:
        """The compile_commands entry of ``path``, if it has one."""
        if not self.commands:  # no compilation database: nothing to look up (no path to resolve)
            return None
        try:
            return self.commands.get(str(Path(path).resolve()))
        except (OSError, RuntimeError):  # a symlink loop: no entry
            return None

    def nvcc_flags(self, path: str | Path) -> tuple[str, ...]:
        """The flags ``path`` is compiled with (before cudalens' own -arch/-cubin/-lineinfo)."""
        entry = self.entry(path)
        own: tuple[str, ...] = ()
        if entry is not None:  # checked when used, so one bad entry stops only its own file
            from cudalens.project.flags import check_flags

            own = check_flags(entry.flags, f"{self.compile_commands} (entry for {entry.file})", trusted=self.trusted,
                              base=entry.directory)  # options files expanded: read once, as checked
        return (*own, *(f"-I{d}" for d in self.include_dirs),
                *(f"-D{d}" for d in self.defines), *self.flags)

    def forced_macros(self, path: str | Path) -> tuple[tuple[str, str], ...]:
        """The ``-D`` macros ``path`` is compiled with (its compile command's, the configuration's,
        the Makefile's, ``--nvcc-flag``'s): they win over the file's own ``#ifndef`` defaults."""
        out: dict[str, str] = {}
        flags = list(self.nvcc_flags(path))
        for i, f in enumerate(flags):
            d = flags[i + 1] if f == "-D" and i + 1 < len(flags) else f[2:] if f.startswith("-D") else None
            if d:
                name, eq, value = d.partition("=")
                out[name] = value if eq else "1"
        return tuple(out.items())

    def search_dirs(self, path: str | Path) -> tuple[str, ...]:
        """The include folders of ``path``'s compile (-I and -isystem, in order)."""
        out: list[str] = []
        flags = list(self.nvcc_flags(path))
        for i, f in enumerate(flags):
            if f in ("-I", "-isystem") and i + 1 < len(flags):
                out.append(flags[i + 1])
            elif f.startswith("-I") and len(f) > 2:
                out.append(f[2:])
            elif f.startswith("-isystem") and len(f) > 8:
                out.append(f[8:])
        return tuple(out)

    def project_includes(self, path: str | Path) -> list[str]:
        """Every project header ``path`` includes, directly or not, in first-inclusion order:
        ``"x"`` searched next to the including file, then in the include folders; ``<x>`` in the
        include folders only. Headers of the toolkit or the system are not followed."""
        return self._walk(path)[1]

    def include_probes(self, path: str | Path) -> tuple[list[str], list[str]]:
        """(the project headers ``path`` includes, as :meth:`project_includes`; the places where a
        file appearing would change what one of their includes opens: for each ``#include`` the walk
        meets, every candidate (the including file's folder, then the include folders) before the
        one that holds it, all of them when none does). What :meth:`header_macros` reads and the
        compiler's include lookup among the project's folders both depend on no more than these."""
        absent: list[str] = []
        return self._walk(path, absent)[1], list(dict.fromkeys(absent))

    def header_macros(self, path: str | Path) -> dict[str, str]:
        """Object-like macros and integral constants of the project headers ``path`` includes, in
        the preprocessor's order (a later definition wins), then the configuration's ``defines``,
        as macro text for the source model. Conditional compilation is not evaluated."""
        out: dict[str, str] = {}
        for _header, macros in self._walk(path)[0]:
            out.update(macros)
        for d in self.defines:  # the configuration's -D, as the compiler gets them
            name, eq, value = d.partition("=")
            out[name] = value if eq else "1"
        return out

    @cached_property
    def _read(self) -> dict[tuple[str, int, int], list[_Stretch]]:
        """The stretches of each file read (:meth:`_stretches`), by path, time and size: a header
        that many units include is read and matched once per build context."""
        return {}

    def _stretches(self, cur: Path) -> list[_Stretch] | None:
        """``cur``'s text cut at its includes: per stretch, its macros (in order) and the include
        that ends it (None for the last); None when it cannot be read."""
        from cudalens.source.parse import read_source

        try:
            st = os.stat(cur)
        except OSError:
            return None
        key = (str(cur), st.st_mtime_ns, st.st_size)
        got = self._read.get(key)
        if got is None:
            try:
                text = re.sub(r"\\\r?\n", " ", read_source(cur).decode("utf-8", "replace"))
            except (OSError, InputError):  # unreadable, not a regular file, too large: not followed
                return None
            got = []
            pos = 0
            for m in _INCLUDE_RE.finditer(text):
                got.append((_macros_in(text[pos:m.start()]), (m.group(1), m.group(2))))
                pos = m.end()
            got.append((_macros_in(text[pos:]), None))
            self._read[key] = got
        return got

    @cached_property
    def _resolved(self) -> dict[tuple[str, str, str, tuple[Path, ...]], str | None]:
        return {}

    def _found(self, cur: Path, include: tuple[str, str], dirs: tuple[Path, ...]) -> str | None:
        """The real path of the file ``#include`` (kind, name) in ``cur`` opens with the include folders
        ``dirs``: ``"x"`` next to ``cur`` first, then in the folders, then (quoted) among the
        repository's files; None when none holds it. Once per build context."""
        from cudalens.project.tree import repo_header

        kind, rel = include
        key = (str(cur), kind, rel, dirs)
        if key not in self._resolved:
            cands = [d / rel for d in ([cur.parent] if kind == '"' else []) + list(dirs)]
            hit = next((c for c in cands if c.is_file()), None)
            if hit is None and kind == '"' and self.repo_root is not None:
                other = repo_header(rel, cur, self._repo_index)
                hit = Path(other) if other is not None else None
            self._resolved[key] = str(hit.resolve()) if hit is not None else None
        return self._resolved[key]

    def _walk(self, path: str | Path, absent: list[str] | None = None
              ) -> tuple[list[tuple[str, tuple[tuple[str, str], ...]]], list[str]]:
        """([(header, the macros of a stretch of its text between two includes)] in the order the
        preprocessor reads them, [headers in first-inclusion order]); each header is read once
        (include guards, #pragma once). ``absent``: filled with :meth:`include_probes`' places."""
        from cudalens.compiled.toolchain import is_toolchain_file

        dirs = tuple(Path(d) for d in self.search_dirs(path))
        start = Path(path).resolve()
        seen: set[str] = {str(start)}
        out: list[tuple[str, tuple[tuple[str, str], ...]]] = []
        order: list[str] = []

        def visit(cur: Path, record: bool) -> None:
            for macros, include in self._stretches(cur) or ():
                if record:
                    out.append((str(cur), macros))
                if include is None:
                    continue
                real = self._found(cur, include, dirs)
                if absent is not None:
                    for c in [*([cur.parent] if include[0] == '"' else []), *dirs]:
                        if (c / include[1]).is_file():
                            break
                        absent.append(str(c / include[1]))
                if real is not None:
                    if real not in seen and not is_toolchain_file(real) and len(seen) < 500:
                        seen.add(real)
                        order.append(real)
                        visit(Path(real), True)

        visit(start, False)
        return out, order


#: the macros of a stretch of a file's text, and the include (kind, name) that ends it
_Stretch = tuple[tuple[tuple[str, str], ...], tuple[str, str] | None]


def _macros_in(text: str) -> tuple[tuple[str, str], ...]:
    """(name, value) of each integral constant and object-like macro ``text`` defines, in order."""
    found = sorted([*_CONST_RE.finditer(text), *_DEFINE_RE.finditer(text)], key=lambda m: m.start())
    return tuple((m.group(1), m.group(2).split("//", 1)[0].split("/*", 1)[0].strip()) for m in found)


def build_context(paths: Iterable[str | Path] = (), *, include_dirs: Iterable[str] = (), defines: Iterable[str] = (),
                  nvcc_flags: Iterable[str] = (), compile_commands: str | None = None,
                  use_config: bool = True, trust_flags: bool = False, project: Any = None,
                  config: Config | None = None) -> BuildContext:
    """The context for analysing ``paths``: the configuration found from the first of them, then
    the compile commands, then the command line's values. Flags from the configuration, the
    command line and the options files they name go through the allow-list of
    :mod:`cudalens.project.flags` (InputError naming their source), unless ``trust_flags``;
    compile_commands entries are checked when their file is compiled. ``config``: the configuration
    when the caller loaded it already (read once per run)."""
    from cudalens.project.flags import check_flags

    first = next(iter(paths), ".")
    if config is None:
        config = find_config(first) if use_config else Config()
    dirs = [*config.include_dirs()]
    for d in include_dirs:
        if not os.path.isdir(d):
            raise InputError(f"-I {d}: no such directory")
        dirs.append(str(Path(d).resolve()))
    if compile_commands and os.path.isdir(compile_commands):  # -p DIR, as clang-tidy has it
        compile_commands = os.path.join(compile_commands, "compile_commands.json")
        if not os.path.isfile(compile_commands):
            raise InputError(f"-p {os.path.dirname(compile_commands)}: no compile_commands.json in it")
    build = project.build if project is not None else None
    cc_file = compile_commands or config.compile_commands() or (build.compile_commands if build else None)
    if build is not None and not cc_file:  # the flags a Makefile or CMakeLists.txt states plainly
        dirs += [d for d in build.include_dirs if d not in dirs]
        defines = (*build.defines, *defines)
    commands = load_compile_commands(cc_file) if cc_file else {}
    return BuildContext(
        include_dirs=tuple(dict.fromkeys(dirs)),
        defines=(*config.defines(), *defines),
        flags=(*check_flags(config.nvcc_flags(), f"{config.path}: [tool.cudalens] nvcc-flags", trusted=trust_flags,
                            base=str(config.root)),
               *check_flags(nvcc_flags, "--nvcc-flag", trusted=trust_flags)),
        trusted=trust_flags,
        repo_root=str(project.root) if project is not None else None,
        commands=MappingProxyType(commands),
        compile_commands=cc_file,
        config=config,
    )


def is_header(path: str | Path) -> bool:
    return str(path).endswith(HEADER_SUFFIXES)
