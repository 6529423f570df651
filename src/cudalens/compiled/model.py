"""Facts the compiled layer establishes: frozen records, JSON round-trippable (for the cache)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from cudalens.errors import CudalensError


@dataclass(frozen=True)
class CompilerMessage:
    """One diagnostic of nvcc/ptxas, parsed into where and what."""

    file: str | None
    line: int | None
    message: str
    severity: str  # "error" | "warning" | "remark"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "message": self.message, "severity": self.severity}

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        return f"{where}{self.severity}: {self.message}"


class CompileError(CudalensError):
    """The compiler rejected the file. ``messages`` holds its errors as (file, line, message)."""

    def __init__(self, messages: tuple[CompilerMessage, ...], command: str = "") -> None:
        self.messages = messages
        self.command = command
        errors = [m for m in messages if m.severity == "error"] or list(messages)
        first = str(errors[0]) if errors else "compilation failed"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(first + more)


@dataclass(frozen=True)
class Resources:
    """What ptxas allocated for one kernel. Bytes unless the name says otherwise."""

    registers: int
    static_shared_bytes: int
    local_bytes: int  # stack frame (local memory per thread)
    spill_stores: int
    spill_loads: int
    constant_bytes: int  # bank 0: kernel parameters and driver constants (cuobjdump CONSTANT[0])
    barriers: int

    def to_dict(self) -> dict[str, int]:
        return {
            "registers": self.registers,
            "static_shared_bytes": self.static_shared_bytes,
            "local_bytes": self.local_bytes,
            "spill_stores": self.spill_stores,
            "spill_loads": self.spill_loads,
            "constant_bytes": self.constant_bytes,
            "barriers": self.barriers,
        }


class Instruction(NamedTuple):
    """One SASS instruction with where it came from (lines of the analyzed file only). A named tuple: a
    compile reads 10^4 to 10^5 of them (the frozen dataclass it was cost a microsecond each to make)."""

    offset: int
    opcode: str  # full opcode with modifiers: "LDG.E.128", "F2F.F32.F64"
    klass: str | None  # cudalens class ("ldg.128", "fp64", ...), None for uninteresting ones
    line: int | None  # innermost line in the analyzed file
    lines: tuple[int, ...] = ()  # every analyzed-file line of the inline chain, innermost first
    written: tuple[str, int] | None = None  # (file, line) where the code is written, in any file (innermost)


@dataclass(frozen=True)
class CompiledKernel:
    """Everything established about one kernel from its cubin."""

    name: str  # base name as written in the source ("saxpy")
    mangled: str
    demangled: str  # full signature where a demangler was available, else the base name
    resources: Resources
    sass_counts: dict[str, int] = field(default_factory=dict)  # class -> count
    sass_by_line: dict[int, dict[str, int]] = field(default_factory=dict)  # line -> class -> count
    cross_check: tuple[str, ...] = ()  # disagreements between ptxas -v and cuobjdump, if any
    flags: tuple[str, ...] = ()  # the compiler flags used (for flag rules such as I16)
    cc: str = "9.0"
    # "file name:line" where the code is written (any file, an included one too) -> {bytes per lane: LDS
    # instructions}: the widths ptxas gave the shared loads. The SASS instructions themselves are not kept:
    # what the rules read of them (these widths, the counts per class and per line) is worked out at compile
    # time, so a compile carries the same facts whether it was run or read from the cache
    shared_widths: dict[str, dict[int, int]] = field(default_factory=dict, compare=False)

    def resources_dict(self) -> dict[str, int]:
        return self.resources.to_dict()

    def lines_with(self, *classes: str) -> dict[int, int]:
        """Source line -> number of instructions of any of ``classes`` on it."""
        out: dict[int, int] = {}
        for line, counts in self.sass_by_line.items():
            n = sum(counts.get(c, 0) for c in classes)
            if n:
                out[line] = n
        return out

    def count(self, *classes: str) -> int:
        return sum(self.sass_counts.get(c, 0) for c in classes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "mangled": self.mangled,
            "demangled": self.demangled,
            "cc": self.cc,
            "resources": self.resources_dict(),
            "sass_counts": dict(self.sass_counts),
            "sass_by_line": {str(k): dict(v) for k, v in sorted(self.sass_by_line.items())},
            "cross_check": list(self.cross_check),
            "flags": list(self.flags),
            "shared_widths": {k: {str(w): n for w, n in v.items()} for k, v in sorted(self.shared_widths.items())},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CompiledKernel":
        return cls(
            name=d["name"],
            mangled=d["mangled"],
            demangled=d["demangled"],
            cc=d["cc"],
            resources=Resources(**d["resources"]),
            sass_counts=dict(d["sass_counts"]),
            sass_by_line={int(k): dict(v) for k, v in d["sass_by_line"].items()},
            cross_check=tuple(d.get("cross_check", ())),
            flags=tuple(d.get("flags", ())),
            shared_widths={k: {int(w): n for w, n in v.items()} for k, v in d["shared_widths"].items()},
        )


@dataclass(frozen=True)
class CompileResult:
    """The outcome of compiling one file for one compute capability."""

    path: str
    cc: str
    kernels: dict[str, CompiledKernel]
    errors: tuple[CompilerMessage, ...]  # diagnostics (warnings too) the compiler printed
    toolchain: Any  # cudalens.compiled.toolchain.Toolchain
    seconds: float
    cache_hit: bool
    flags: tuple[str, ...] = ()
    deps: tuple[str, ...] = ()  # every file the device preprocessor read (cache.compile_deps), real paths
    # the PTX of the same compile (nvcc --keep): what ptxas assembled into the cubin above, read by
    # the compiled access model (cudalens.evidence.compiled_access); "" when not kept
    ptx: str = field(default="", repr=False, compare=False)

    @property
    def project_deps(self) -> tuple[str, ...]:
        """The dependencies that belong to the project: not the toolchain's or the system's headers."""
        from cudalens.compiled.toolchain import is_toolchain_file

        return tuple(d for d in self.deps if not is_toolchain_file(d))

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "cc": self.cc,
            "flags": list(self.flags),
            "seconds": round(self.seconds, 4),
            "cache_hit": self.cache_hit,
            "deps": list(self.deps),
            "errors": [m.to_dict() for m in self.errors],
            "kernels": {k: v.to_dict() for k, v in self.kernels.items()},
        }
