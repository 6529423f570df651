"""Configuration discovery: the ``[tool.cudalens]`` table, found the way ruff finds its own.

From the analyzed file's folder upwards, the first folder holding

* ``cudalens.toml`` (its top-level keys, or its ``[tool.cudalens]`` table if it has one), or
* ``pyproject.toml`` with a ``[tool.cudalens]`` table (a pyproject.toml without one is skipped)

gives the configuration; relative paths in it are relative to that file's folder. Build keys
(both ``include-dirs`` and ``include_dirs`` spellings are accepted)::

    [tool.cudalens]
    include-dirs = ["include", "third_party/cutlass/include"]
    nvcc-flags = ["-std=c++17", "--expt-relaxed-constexpr"]
    defines = ["TILE=32"]            # or a table: {TILE = 32, USE_X = true}
    compile-commands = "build/compile_commands.json"
    cc = "9.0"

Every other key (rule selection: ``select``, ``ignore``, ...) is kept in :attr:`Config.section`,
unread here, for the code that owns it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cudalens.errors import InputError

NAMES = ("cudalens.toml", "pyproject.toml")
BUILD_KEYS = ("include-dirs", "nvcc-flags", "defines", "compile-commands", "cc")


@dataclass(frozen=True)
class Config:
    """One configuration: where it came from and its table (read-only)."""

    path: str | None = None  # the file, None when none was found
    section: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def root(self) -> Path:
        return Path(self.path).parent if self.path else Path.cwd()

    @property
    def raw(self) -> Mapping[str, Any]:
        """The table with ``__file__`` added (the form other readers of the table take)."""
        return MappingProxyType({**self.section, **({"__file__": self.path} if self.path else {})})

    def get(self, key: str, default: Any = None) -> Any:
        """``key`` in either spelling (``include-dirs`` / ``include_dirs``)."""
        for k in (key, key.replace("-", "_"), key.replace("_", "-")):
            if k in self.section:
                return self.section[k]
        return default

    def _where(self, key: str) -> str:
        return f"{self.path}: [tool.cudalens] {key}"

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.get(key, ())
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise InputError(f"{self._where(key)}: expected a list of strings, got {value!r}")
        return tuple(value)

    def paths(self, key: str) -> tuple[str, ...]:
        return tuple(str((self.root / p).resolve()) for p in self.strings(key))

    def include_dirs(self) -> tuple[str, ...]:
        return self.paths("include-dirs")

    def nvcc_flags(self) -> tuple[str, ...]:
        return self.strings("nvcc-flags")

    def defines(self) -> tuple[str, ...]:
        value = self.get("defines", ())
        if isinstance(value, Mapping):
            out = []
            for k, v in value.items():
                if isinstance(v, bool):
                    v = int(v)
                if not isinstance(v, (str, int, float)):
                    raise InputError(f"{self._where('defines')}: {k} = {v!r} is not a string or number")
                out.append(f"{k}={v}")
            return tuple(out)
        return self.strings("defines")

    def compile_commands(self) -> str | None:
        value = self.get("compile-commands")
        if value is None:
            return None
        if not isinstance(value, str):
            raise InputError(f"{self._where('compile-commands')}: expected a path, got {value!r}")
        return str((self.root / value).resolve())

    def cc(self) -> str | None:
        value = self.get("cc")
        if value is None:
            return None
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise InputError(f"{self._where('cc')}: expected a compute capability such as \"9.0\", got {value!r}")
        return str(value)


def _read(path: Path) -> dict[str, Any]:
    from cudalens.textio import load_toml

    try:
        return load_toml(path)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _table(path: Path) -> dict[str, Any] | None:
    doc = _read(path)
    tool = doc.get("tool")
    table = tool.get("cudalens") if isinstance(tool, dict) else None
    if table is None and path.name == "cudalens.toml":
        table = {k: v for k, v in doc.items() if k != "tool"}
    if table is not None and not isinstance(table, dict):
        raise InputError(f"{path}: [tool.cudalens] must be a table")
    return table


def find_config(start: str | Path) -> Config:
    """The configuration that applies to ``start`` (a file or folder); an empty one if none."""
    here = Path(os.path.abspath(start))
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        for name in NAMES:
            candidate = folder / name
            if candidate.is_file():
                table = _table(candidate)
                if table is not None:
                    return Config(str(candidate), MappingProxyType(table))
    return Config()


def load_config(paths: Iterable[str | Path] | str | Path = ".") -> Config:
    """The configuration of the first of ``paths`` (the working directory when none is given)."""
    if isinstance(paths, (str, Path)):
        return find_config(paths)
    first = next(iter(paths), ".")
    return find_config(first)
