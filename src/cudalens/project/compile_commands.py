"""``compile_commands.json`` (CMake's ``CMAKE_EXPORT_COMPILE_COMMANDS``, Bear): each file's own flags.

Each entry names ``directory``, ``file`` and either ``arguments`` (a list) or ``command`` (one
string, split as a POSIX shell would, without running one). The compiler (first word) is replaced
by ours; what the build chose for outputs and targets (``-o``, ``-c``, ``-x``, dependency files,
``-gencode``/``-arch``/``--generate-code``: cudalens compiles for the ``--cc`` it analyses) is
dropped; everything else is kept, with relative ``-I``/``-isystem``/``-include`` paths made
absolute against the entry's directory. Entries of a clang CUDA build keep only the flags both
compilers share (``-I``, ``-isystem``, ``-D``, ``-U``, ``-include``, ``-std=``).

A relative ``directory`` (not written by CMake, but convenient for a file committed with a
project) is taken relative to the folder of the JSON file.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudalens.errors import InputError

_WITH_VALUE = {"-o", "--output-file", "-x", "--x", "-MF", "-MT", "-MQ", "-ccbin", "--compiler-bindir",
               "-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code",
               "--dependency-output", "-odir", "--output-directory"}
_DROP = {"-c", "--compile", "-M", "-MM", "-MD", "-MMD", "-MP", "-cubin", "-ptx", "-fatbin", "-cuda",
         "--cubin", "--ptx", "--fatbin", "-lineinfo", "--generate-line-info", "-dc", "--device-c",
         "-Xptxas=-v", "-v"}
_DROP_PREFIX = ("-gencode=", "--generate-code=", "-arch=", "--gpu-architecture=", "-code=", "--gpu-code=",
                "-o", "--output-file=", "-ccbin=", "--compiler-bindir=", "--dependency-output=",
                "--options-file=")
_PATH_VALUE = {"-I": "-I", "--include-path": "-I", "-isystem": "-isystem", "--system-include": "-isystem",
               "-include": "-include", "--pre-include": "-include"}
_SHARED_PREFIX = ("-I", "-D", "-U", "-std=", "-isystem", "-include")


@dataclass(frozen=True)
class Entry:
    """One translation unit of the build: its file and the flags cudalens compiles it with."""

    file: str  # absolute, resolved
    directory: str
    flags: tuple[str, ...]
    compiler: str  # the build's compiler (informational)


def _absolute(value: str, directory: str) -> str:
    return value if os.path.isabs(value) else os.path.normpath(os.path.join(directory, value))


def translate(args: list[str], directory: str, file: str) -> tuple[str, ...]:
    """The build's argument list (compiler first) as flags for our nvcc."""
    compiler = os.path.basename(args[0]) if args else ""
    nvcc = "nvcc" in compiler
    out: list[str] = []
    i = 1
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        i += 1
        if a in _PATH_VALUE and nxt is not None:
            out += [_PATH_VALUE[a], _absolute(nxt, directory)]
            i += 1
            continue
        if a.startswith("-I") and len(a) > 2:
            out.append("-I" + _absolute(a[2:], directory))
            continue
        if a.startswith("--include-path="):
            out.append("-I" + _absolute(a.split("=", 1)[1], directory))
            continue
        if a.startswith("-isystem") and len(a) > 8:
            out += ["-isystem", _absolute(a[8:], directory)]
            continue
        if a in ("-D", "-U", "--define-macro", "--undefine-macro") and nxt is not None:
            out.append(("-D" if a in ("-D", "--define-macro") else "-U") + nxt)
            i += 1
            continue
        if a == "--options-file" and nxt is not None:
            out += ["--options-file", _absolute(nxt, directory)]
            i += 1
            continue
        if not a.startswith("-"):
            continue  # the input file (or a stray word of a flag we dropped)
        if not nvcc:
            if a.startswith(_SHARED_PREFIX):
                out.append(a)
            continue
        if a in _WITH_VALUE:
            i += 1
            continue
        if a in _DROP or a.startswith(_DROP_PREFIX) and not a.startswith("-optf"):
            continue
        out.append(a)
    return tuple(out)


def _entry(raw: Any, base: Path, where: str) -> Entry:
    if not isinstance(raw, Mapping) or "file" not in raw or "directory" not in raw:
        raise InputError(f"{where}: each entry needs \"directory\" and \"file\"")
    directory = str((base / str(raw["directory"])).resolve())
    if isinstance(raw.get("arguments"), list):
        args = [str(a) for a in raw["arguments"]]
    elif isinstance(raw.get("command"), str):
        try:
            args = shlex.split(raw["command"])
        except ValueError as exc:
            raise InputError(f"{where}: entry for {raw['file']}: cannot split its command ({exc})") from None
    else:
        raise InputError(f"{where}: entry for {raw['file']} has neither \"arguments\" nor \"command\"")
    file = str(Path(_absolute(str(raw["file"]), directory)).resolve())
    return Entry(file, directory, translate(args, directory, file), args[0] if args else "")


def load_compile_commands(path: str | Path) -> dict[str, Entry]:
    """Resolved file path -> its :class:`Entry` (the first entry of a file repeated)."""
    from cudalens.textio import load_json

    p = Path(path)
    try:
        data = load_json(p)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of compile commands")
    base = p.resolve().parent
    out: dict[str, Entry] = {}
    for i, raw in enumerate(data):
        e = _entry(raw, base, f"{path} entry {i}")
        out.setdefault(e.file, e)
    return out
