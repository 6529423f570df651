"""PTX as the compiler produced it: one record per instantiated kernel, its instructions with their
source locations (``-lineinfo``), registers, shared/local declarations and basic blocks.

``nvcc -ptx -lineinfo`` writes ``.loc FILE LINE COL`` before the instructions of each source
position; for inlined code (``__device__`` helpers, library wrappers) the directive carries
``inlined_at FILE LINE COL`` of the call. Every instruction keeps the innermost location (what
Nsight Compute attributes its SASS to) and the chain of call sites, so a result can be reported at
the first line of the chain that lies in the user's own files (:func:`user_location`).

Pure parsing: :func:`parse_ptx` takes the text and returns frozen records.
:func:`compile_ptx` runs the project's nvcc (toolchain.py) with an argument list, never a shell.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable, Iterable, Mapping

from cudalens.compiled.names import split_top_level
from cudalens.errors import InputError, ToolchainError


@dataclass(frozen=True)
class Loc:
    """A source position: file index (of the module's ``.file`` table), line, and the call sites it
    was inlined into (innermost first)."""

    file: int
    line: int
    inlined_at: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Instruction:
    index: int
    opcode: str  # full dotted opcode: "ld.global.nc.v4.f32"
    operands: tuple[str, ...]  # as written; vectors keep their braces: "{%f1, %f2}"
    pred: str | None = None  # "%p1" or "!%p1"
    loc: Loc | None = None
    parts: tuple[str, ...] = field(init=False, compare=False, repr=False)  # the opcode's dotted parts
    base: str = field(init=False, compare=False, repr=False)  # "ld"

    def __post_init__(self) -> None:
        parts = _opcode_parts(self.opcode)
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "base", parts[0])


@lru_cache(maxsize=4096)
def _opcode_parts(opcode: str) -> tuple[str, ...]:
    return tuple(opcode.split("."))


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # ".u64", ".u32", ".f32", ".b8" ...
    size: int  # bytes
    align: int
    is_array: bool = False  # ".b8 name[N]": a struct or array passed by value


@dataclass(frozen=True)
class SharedDecl:
    name: str
    size: int | None  # bytes; None for ``.extern .shared`` (dynamic shared memory)
    align: int
    space: str = "shared"  # "shared" | "local" | "const" | "global"


@dataclass(frozen=True)
class Function:
    name: str  # mangled
    is_entry: bool
    params: tuple[Param, ...]
    instructions: tuple[Instruction, ...]
    labels: Mapping[str, int]  # label -> index of the instruction that follows it
    locals: tuple[SharedDecl, ...] = ()  # .local/.shared declared inside the body
    maxntid: tuple[int, ...] | None = None
    reqntid: tuple[int, ...] | None = None
    minnctapersm: int | None = None

    @cached_property
    def blocks(self) -> tuple[tuple[int, int], ...]:
        """The basic blocks' (start, end) instruction ranges: a block starts at a label or after a
        branch or exit (worked out once: the lane machine's passes each walk them)."""
        n = len(self.instructions)
        starts = {0} | {i for i in self.labels.values() if i < n}
        starts.update(ins.index + 1 for ins in self.instructions if ins.base in ("bra", "ret", "exit", "brx"))
        ordered = sorted(s for s in starts if s < n)
        return tuple(zip(ordered, [*ordered[1:], n]))


@dataclass(frozen=True)
class PtxModule:
    files: Mapping[int, str]
    functions: tuple[Function, ...]
    globals: tuple[SharedDecl, ...] = ()  # module-level .shared/.const/.global declarations
    target: str = ""

    @property
    def entries(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.is_entry)

    def function(self, name: str) -> Function | None:
        return next((f for f in self.functions if f.name == name), None)


_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
               "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "pred": 1, "f16x2": 4, "bf16x2": 4,
               "b128": 16}


def type_bytes(t: str) -> int | None:
    return _TYPE_BYTES.get(t.lstrip("."))


_FILE_RE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_LOC_RE = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$")
_INL_RE = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")
_ENTRY_RE = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)?(\.entry|\.func)\s+(?:\([^)]*\)\s*)?([\w$.]+)")
_PARAM_RE = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?(\.\w+)\s+([\w$]+)(?:\[(\d+)\])?")
_DECL_RE = re.compile(r"^\s*(?:\.extern\s+)?(?:\.visible\s+|\.global\s+)?\.(shared|local|const|global)\s+"
                      r"(?:\.align\s+(\d+)\s+)?(\.\w+)\s+([\w$]+)((?:\[\d*\])*)")
_DIRECTIVE_RE = re.compile(r"^\s*\.(maxntid|reqntid|minnctapersm)\s+([\d,\s]+)")
_LABEL_RE = re.compile(r"^\s*([\w$]+):\s*$")


def _split_operands(text: str) -> tuple[str, ...]:
    # a comma inside braces (vector operands) does not split; addresses ([%rd1+4]) hold none
    parts = [p.strip() for p in (split_top_level(text, "{}[]") if "{" in text else text.split(","))]
    return tuple(parts if parts[-1] else parts[:-1])


def _decl(m: re.Match, is_extern: bool) -> SharedDecl:
    space, align, typ, name, dims = m.groups()
    size: int | None = type_bytes(typ) or 1
    for d in re.findall(r"\[(\d*)\]", dims or ""):
        size = None if (d == "" or size is None) else size * int(d)
    if is_extern:
        size = None
    return SharedDecl(name, size, int(align) if align else (type_bytes(typ) or 1), space)


def parse_ptx(text: str, entries: Callable[[str], bool] | None = None) -> PtxModule:
    """Parse a PTX module (the subset nvcc emits) into functions, instructions and locations.

    ``entries``: which kernels (by mangled name) to parse; the bodies of the others are skipped
    (a translation unit using Thrust holds dozens of library kernels nobody asked about). Device
    functions (``.func``) are always parsed."""
    source = PtxSource(text)
    return source.module([name for name in source.entry_names if entries is None or entries(name)])


class PtxSource:
    """The text of a PTX module, indexed in one pass: its header (files, target, module-level
    declarations) and where each function lies. :meth:`module` parses the functions asked for,
    each once, so that two processes sharing a unit's kernels each parse only their own."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines()
        self.files: dict[int, str] = {}
        self.globals: list[SharedDecl] = []
        self.target = ""
        self.spans: list[tuple[str, bool, int, int]] = []  # (name, is entry, header line, line after the body)
        self._parsed: dict[str, Function | None] = {}
        lines, i, n = self.lines, 0, len(self.lines)
        while i < n:
            line = lines[i].split("//", 1)[0]
            s = line.strip()
            fm = _FILE_RE.match(lines[i])  # before the comment cut: a path may hold "//" (nvcc's "bin/..//include")
            if fm:
                self.files[int(fm.group(1))] = fm.group(2)
                i += 1
                continue
            if s.startswith(".target"):
                self.target = s.split()[1] if len(s.split()) > 1 else ""
            em = _ENTRY_RE.match(line)
            if em and not s.endswith(";"):
                j = i
                while j < n and "{" not in lines[j].split("//", 1)[0]:
                    if lines[j].split("//", 1)[0].strip().endswith(";"):  # a declaration without a body
                        break
                    j += 1
                if j >= n or "{" not in lines[j].split("//", 1)[0]:
                    i = j + 1
                    continue
                j += 1
                while j < n and lines[j].rstrip() != "}":  # nvcc closes a function body in column 0
                    j += 1
                self.spans.append((em.group(2), em.group(1) == ".entry", i, j + 1))
                i = j + 1
                continue
            dm = _DECL_RE.match(line)
            if dm and s.endswith(";") and not s.startswith((".visible .func", ".extern .func")):
                self.globals.append(_decl(dm, s.startswith(".extern")))
            i += 1
        self.size = {name: end - start for name, _e, start, end in self.spans}  # lines: the cost of a kernel

    @property
    def entry_names(self) -> list[str]:
        return [name for name, is_entry, _s, _e in self.spans if is_entry]

    def _function(self, name: str, is_entry: bool, start: int) -> Function | None:
        if name not in self._parsed:
            self._parsed[name] = _parse_function(self.lines, start, is_entry, name)[0]
        return self._parsed[name]

    def module(self, entries: Iterable[str]) -> PtxModule:
        """The module with the kernels ``entries`` and every device function, in the file's order."""
        wanted = set(entries)
        fns = [self._function(name, is_entry, start) for name, is_entry, start, _e in self.spans
               if not is_entry or name in wanted]
        return PtxModule(self.files, tuple(f for f in fns if f is not None), tuple(self.globals), self.target)


def _parse_function(lines: list[str], i: int, is_entry: bool, name: str) -> tuple[Function | None, int]:
    header: list[str] = []
    n = len(lines)
    while i < n and "{" not in lines[i].split("//", 1)[0]:
        header.append(lines[i].split("//", 1)[0])
        i += 1
        if header and header[-1].strip().endswith(";"):  # a declaration without a body
            return None, i
    if i >= n:
        return None, i
    head = " ".join(header)
    # the opening line may also carry directives before the brace
    head += " " + lines[i].split("{", 1)[0]
    params = []
    for m in _PARAM_RE.finditer(head.split(name, 1)[1] if name in head else head):
        align, typ, pname, count = m.groups()
        size = (type_bytes(typ) or 1) * (int(count) if count else 1)
        params.append(Param(pname, typ, size, int(align) if align else (type_bytes(typ) or 1), count is not None))
    dirs: dict[str, tuple[int, ...]] = {}
    for m in re.finditer(r"\.(maxntid|reqntid|minnctapersm)\s+([\d,\s]+)", head):
        dirs[m.group(1)] = tuple(int(x) for x in m.group(2).replace(" ", "").split(",") if x)
    i += 1
    depth = 1
    instrs: list[Instruction] = []
    labels: dict[str, int] = {}
    local_decls: list[SharedDecl] = []
    loc: Loc | None = None
    parent: dict[tuple[int, int, int], tuple[int, int, int]] = {}  # inlined position -> its call site
    locs: dict[tuple[int, int, tuple[tuple[int, int], ...]], Loc] = {}  # one record per distinct location
    pending = ""
    new, statement = object.__new__, _statement
    while i < n and depth > 0:
        raw = lines[i]
        if "//" in raw:
            raw = raw.split("//", 1)[0]
        i += 1
        s = raw.strip()
        if not s:
            continue
        if not pending and s[-1] == ";" and s[0] not in ".{}" and s.count(";") == 1:  # one statement: most lines
            pred, opcode, operands, parts = statement(s[:-1].rstrip())  # (_instruction's record, made here)
            ins = new(Instruction)
            ins.__dict__.update(index=len(instrs), opcode=opcode, operands=operands, pred=pred, loc=loc, parts=parts,
                                base=parts[0])
            instrs.append(ins)
            continue
        if s.startswith(".loc"):
            pos = _loc_position(s)
            if pos is not None:
                here, site = pos
                chain: list[tuple[int, int]] = []
                if site is not None:
                    parent[here] = site
                while site is not None and len(chain) < 32:
                    chain.append(site[:2])
                    site = parent.get(site)
                key = (here[0], here[1], tuple(chain))
                loc = locs.get(key)
                if loc is None:
                    loc = locs[key] = Loc(*key)
                continue
        lab = _LABEL_RE.match(raw)
        if lab:
            labels[lab.group(1)] = len(instrs)
            continue
        dm = _DIRECTIVE_RE.match(raw)
        if dm:
            dirs[dm.group(1)] = tuple(int(x) for x in dm.group(2).replace(" ", "").split(",") if x)
            continue
        if s.startswith("."):
            d = _DECL_RE.match(raw)
            if d and d.group(1) in ("shared", "local"):
                local_decls.append(_decl(d, s.startswith(".extern")))
            continue
        # statements end at ';'; a brace where a statement starts opens or closes a scope block
        # (``{ .reg .b64 %tmp; cvt.u64.u32 %tmp, %r4; cvta.shared.u64 %rd5, %tmp; }`` on lines of
        # their own or shared with statements); braces inside a statement are vector operands
        rest = s
        while rest:
            if not pending.strip() and rest[0] in "{}":
                depth += 1 if rest[0] == "{" else -1
                rest = rest[1:].strip()
                continue
            semi = rest.find(";")
            if semi < 0:
                pending += " " + rest
                break
            stmt, pending, rest = (pending + " " + rest[:semi]).strip(), "", rest[semi + 1:].strip()
            if not stmt or stmt.startswith("."):  # a declaration scoped to the block
                continue
            instrs.append(_instruction(stmt, len(instrs), loc))
    return Function(name, is_entry, tuple(params), tuple(instrs), labels, tuple(local_decls),
                    dirs.get("maxntid"), dirs.get("reqntid"),
                    dirs["minnctapersm"][0] if "minnctapersm" in dirs else None), i


Position = tuple[int, int, int]


@lru_cache(maxsize=65536)
def _loc_position(s: str) -> tuple[Position, Position | None] | None:
    """A ``.loc`` line: (file, line, column) and the call site it was inlined at, if any."""
    lm = _LOC_RE.match(s)
    if lm is None:
        return None
    site = next(((int(a), int(b), int(c)) for a, b, c in _INL_RE.findall(lm.group(4))), None)
    return (int(lm.group(1)), int(lm.group(2)), int(lm.group(3))), site


@lru_cache(maxsize=65536)
def _statement(stmt: str) -> tuple[str | None, str, tuple[str, ...], tuple[str, ...]]:
    """One statement (without its ';'): ``[@pred] opcode operands`` -> (pred, opcode, operands, the
    opcode's dotted parts)."""
    pred = None
    if stmt.startswith("@"):
        pred, stmt = stmt[1:].split(None, 1)
    parts = stmt.split(None, 1)
    return pred, parts[0], _split_operands(parts[1]) if len(parts) > 1 else (), _opcode_parts(parts[0])


def _instruction(stmt: str, index: int, loc: Loc | None) -> Instruction:
    """The record of one statement: the fields :class:`Instruction`'s constructor sets, set at once
    (a parsed unit has tens of thousands; the frozen constructor sets them one call at a time)."""
    pred, opcode, operands, parts = _statement(stmt)
    ins = object.__new__(Instruction)
    ins.__dict__.update(index=index, opcode=opcode, operands=operands, pred=pred, loc=loc, parts=parts,
                        base=parts[0])
    return ins


def is_system_file(path: str) -> bool:
    """A header of the CUDA toolkit or the C++ library (not the user's code)."""
    p = path.replace("\\", "/")
    return any(m in p for m in ("/nvidia/cu1", "/cuda/include/", "/include/crt/", "/cccl/", "/usr/include/",
                                "/usr/lib/gcc", "/targets/x86_64-linux/include")) or re.search(r"/cuda-\d", p) is not None


def user_location(loc: Loc | None, files: Mapping[int, str]) -> tuple[str, int] | None:
    """The first position of ``loc``'s chain (innermost first) that lies in a user's file."""
    if loc is None:
        return None
    chain = [(loc.file, loc.line), *loc.inlined_at]
    for f, ln in chain:
        path = files.get(f, "")
        if path and not is_system_file(path):
            return path, ln
    f, ln = chain[-1]
    return files.get(f, ""), ln


# ---------------------------------------------------------------------------------------- compiling


@dataclass(frozen=True)
class PtxBuild:
    path: str
    ptx: str
    flags: tuple[str, ...]
    seconds: float
    module: PtxModule = field(compare=False, repr=False, default=None)  # type: ignore[assignment]


def ptx_flags(cc: str, defines: Mapping[str, str | None] | Iterable[str] | None = None,
              extra_flags: Iterable[str] = ()) -> list[str]:
    """nvcc flags for the PTX the access model reads: ``-ptx -lineinfo -arch=sm_XY`` plus the
    build's defines and flags (the same ones the cubin is built with, minus the cubin options)."""
    from cudalens.compiled.compile import build_flags

    base = build_flags(cc, defines, extra_flags)
    out, skip = [], False
    for f in base:
        if skip:
            skip = False
            continue
        if f == "-cubin":
            continue
        if f == "-Xptxas":
            skip = True
            continue
        out.append(f)
    return ["-ptx", *out]


def compile_ptx(path: str | Path, cc: str = "9.0", defines: Mapping[str, str | None] | Iterable[str] | None = None,
                extra_flags: Iterable[str] = (), toolchain=None, use_cache: bool = True) -> PtxBuild:
    """``nvcc -ptx -lineinfo`` of one translation unit with the project's toolchain, cached like the
    cubin (cudalens.compiled.cache: keyed by the files the compiler read, cache.compile_deps).

    Raises InputError for a missing file, ToolchainError when nvcc is missing, and
    :class:`cudalens.compiled.model.CompileError` when the code does not compile.
    """
    import time

    from cudalens.compiled import cache as _cache
    from cudalens.compiled.model import CompileError, CompilerMessage
    from cudalens.compiled.reports import parse_diagnostics
    from cudalens.compiled.toolchain import discover

    src = Path(path)
    if not src.is_file():
        raise InputError(f"{path}: no such file")
    tc = toolchain or discover()
    nvcc = tc.get("nvcc")
    flags = ptx_flags(cc, defines, extra_flags)
    t0 = time.perf_counter()
    roots = (str(Path(nvcc.path).resolve().parent.parent) + "/",)
    key = _cache.manifest_key(str(src), flags, cc, tc.fingerprint(), extra="ptx") if use_cache else None
    if key is not None:
        hit = _cache.lookup(key, roots)
        if hit and isinstance(hit.get("ptx"), str):
            return PtxBuild(str(src), hit["ptx"], tuple(flags), time.perf_counter() - t0, parse_ptx(hit["ptx"]))
    from cudalens.compiled import invocation

    with tempfile.TemporaryDirectory(prefix="cudalens-ptx-") as tmp:
        out = Path(tmp) / "out.ptx"
        # nvcc passes its input's name through a shell: it compiles a fixed-name wrapper that
        # includes the user's file (as compile.py does), never the user's file name itself
        inv = invocation.prepare(src.resolve(), tmp, flags)
        try:
            proc = subprocess.run([nvcc.path, *inv.flags, *_cache.DEPENDENCY_FLAGS, str(inv.wrapper), "-o", str(out)],
                                  capture_output=True, text=True, env=tc.env(), timeout=600, cwd=tmp)
        except OSError as exc:
            raise ToolchainError(f"cannot run {nvcc.path}: {exc}") from exc
        if proc.returncode != 0 or not out.exists():
            from cudalens.compiled.compile import _private_paths_out

            output = _private_paths_out(inv.user_path(proc.stderr + proc.stdout), tmp, src)
            messages = parse_diagnostics(output)
            if not any(m.severity == "error" for m in messages):
                tail = " ".join(output.strip().splitlines()[-3:]) or "nvcc failed"
                messages = (*messages, CompilerMessage(None, None, tail, "error"))
            raise CompileError(messages, " ".join([nvcc.path, *flags, str(src)]))
        text = out.read_text(errors="replace")
        deps = _cache.compile_deps(tmp, leave_out=inv.wrapper) if key is not None else []
        if key is not None and deps:
            _cache.record(key, deps, {"ptx": text}, roots)
    return PtxBuild(str(src), text, tuple(flags), time.perf_counter() - t0, parse_ptx(text))
