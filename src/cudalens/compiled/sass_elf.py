"""The SASS of many cubins from ONE nvdisasm start, equal to the per-cubin ``nvdisasm -gi -c`` parse.

nvdisasm's start costs ~0.35 s of CPU per call, whatever the cubin. :func:`disassemble_many` reads each
cubin's ELF itself (elf_read.py), concatenates the raw bytes of every ``.text.*`` section of every cubin
into one file, disassembles it with ONE ``nvdisasm -b SM<xy> -c -ndf`` call, splits the output by
offset, and hands per cubin the lines ``nvdisasm -gi -c -ndf CUBIN`` would print (sections, labels,
``//##`` lines, instructions) to the reader of :func:`cudalens.compiled.sass.parse_nvdisasm`
(:class:`cudalens.compiled.sass.SassReader`), without writing them as text. The rules it follows
(checked on 13.2's nvdisasm):

* line info: dwarf_lines.py decodes ``.debug_line`` and gives what the ``//##`` blocks say (its docstring says
  how: the last row per address, a block where (file, line) changes, the inlining chain innermost first).
* labels: internal functions (symbols in a section at an offset other than 0, e.g.
  ``$__internal_0_$__cuda_sm20_div_s64``) are printed as labels; a ``CALL ... 0xADDR`` target is printed
  as the name of the function at that address (through the instruction's relocation first), else as a
  local label (``.L_x_N``: a call to an unnamed subroutine), and a ``BRA`` to its own address (the
  padding self-loop) gets a label of its own, as nvdisasm does.

A cubin falls back to its own per-cubin command (``sass.disassemble_one``) wherever this reading cannot
be trusted: an unreadable ELF, a line table dwarf_lines.py refuses, a section size not a multiple of 16,
a line row off an instruction, an offset missing from the raw output, a CALL out of the cubin or through
a relocation it does not resolve, a symbol or file name with a line break. All cubins fall back when ``cc`` has no raw-binary architecture in
nvdisasm (before Turing) or the one raw call fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from cudalens.compiled.dwarf_lines import LineTableError, Row, decode_line_table, section_locations
from cudalens.compiled.elf_read import (
    RELOCATION_TABLES,
    STT_FILE,
    STT_FUNC,
    STT_SECTION,
    SYMBOL_TABLES,
    Elf,
    Symbol,
)
from cudalens.compiled.sass import FunctionSass, SassReader, disassemble_one
from cudalens.gc_pause import collector_paused

# nvdisasm 13.2's --binary architectures (the "a"/"f" variants aside): Turing on.
RAW_ARCHS = frozenset({"75", "80", "86", "87", "88", "89", "90", "100", "101", "103", "110", "120", "121"})
_RAW_INSN_RE = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*$")
# the same, over a whole text whose only whitespace is " ", "\t" and "\n" (no _ODD_SPACE_RE, ASCII)
_RAW_LINES_RE = re.compile(r"^[ \t]*/\*([0-9a-f]+)\*/[ \t]+(\S(?:[^\n]*\S)?)?[ \t]*$", re.M)
_ODD_SPACE_RE = re.compile(r"[\r\x0b\x0c\x1c-\x1f]")  # ASCII whitespace (str.isspace) besides " \t\n"
_CALL_RE = re.compile(r"(\bCALL\S*\s+)0x([0-9a-f]+)")
_BRA_RE = re.compile(r"^((?:@!?U?P[T0-9]+\s+)?BRA\s+)0x([0-9a-f]+)")
_SELF_LABEL = ".L_x_self"
_LINE_BREAK_RE = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # where str.splitlines splits


class _Untrusted(Exception):
    """This cubin's fast path cannot be trusted: it falls back to the per-cubin command."""


@dataclass(frozen=True)
class Disassembled:
    """What :func:`disassemble_batch` gives: per item the parse, and why the items that fell back did."""

    results: tuple[dict[str, FunctionSass], ...]
    fell_back: Mapping[int, str]  # item index -> reason


@dataclass(frozen=True)
class _Section:
    name: str
    data: bytes
    labels: Mapping[int, str]  # offset (not 0) -> symbol name printed as a label
    locations: Mapping[int, tuple[tuple[str, int], ...]]  # offset -> what the "//##" lines printed before it say


@dataclass(frozen=True)
class _Cubin:
    sections: tuple[_Section, ...]
    functions: Mapping[tuple[str, int], str]  # (section, offset) -> function symbol name
    call_relocations: Mapping[tuple[str, int], str | None]  # (section, offset) -> symbol a relocation names


def raw_arch(cc: str) -> str | None:
    """nvdisasm's --binary name for ``cc`` ("9.0" -> "SM90"), or None where it has none."""
    major, _, minor = cc.partition(".")
    xy = f"{major}{minor or '0'}"
    return f"SM{xy}" if xy in RAW_ARCHS else None


def _elf_facts(path: str | Path) -> tuple[list[tuple[str, bytes]], bytes, dict, dict, dict, dict]:
    """(.text sections, .debug_line bytes, its relocations, functions, labels, CALL relocations) of a cubin."""
    with open(path, "rb") as fh:
        elf = Elf(fh.read())
    all_sections = elf.sections
    names = [s.name for s in all_sections]
    by_name = {s.name: s for s in all_sections}
    symtab = by_name.get(".symtab")
    if symtab is None or symtab.type not in SYMBOL_TABLES:
        raise _Untrusted("no symbol table")
    symbols = elf.symbols(symtab)

    def where(sym: Symbol) -> tuple[str, int] | None:
        return (names[sym.shndx], sym.value) if 0 < sym.shndx < len(names) else None

    def relocations(section_name: str) -> dict[int, tuple[str, tuple[str, int] | None, int | None]]:
        """offset -> (symbol name, where the symbol is defined, addend: None where it is in place, REL)."""
        sec = by_name.get(f".rela{section_name}", by_name.get(f".rel{section_name}"))
        if sec is not None and sec.type not in RELOCATION_TABLES:
            raise _Untrusted(f"{sec.name} is no relocation section")
        out = {}
        for rel in elf.relocations(sec) if sec is not None else ():
            sym = symbols[rel.symbol]
            named = sym.name if sym.type != STT_SECTION else ""
            out[rel.offset] = (named, where(sym), rel.addend)
        return out

    texts = [(s.name, elf.data(s)) for s in all_sections if s.name.startswith(".text.")]
    line_data = elf.data(by_name[".debug_line"]) if ".debug_line" in by_name else b""
    line_relocs = {}
    for off, (_, at, addend) in relocations(".debug_line").items():
        if at is None:
            raise _Untrusted("a .debug_line relocation names no section")
        line_relocs[off] = (at[0], at[1] + (addend or 0), addend is None)
    functions: dict[tuple[str, int], str] = {}
    labels: dict[str, dict[int, str]] = {}
    for sym in symbols:
        at, kind = where(sym), sym.type
        if at is None or not sym.name or kind in (STT_SECTION, STT_FILE):
            continue
        if kind == STT_FUNC:
            functions.setdefault(at, sym.name)
        if at[1] and at[0].startswith(".text."):
            labels.setdefault(at[0], {}).setdefault(at[1], sym.name)
    calls: dict[tuple[str, int], str | None] = {}  # None: a relocation whose target is not known
    for name, _ in texts:
        for off, (sym_name, at, addend) in relocations(name).items():
            target = sym_name if sym_name and not addend else None  # REL: the named symbol itself
            if target is None and at is not None and addend is not None:
                target = functions.get((at[0], at[1] + addend))
            calls[(name, off - off % 16)] = target or None
    printed = [*(name for name, _ in texts), *functions.values(), *(n for per in labels.values() for n in per.values()),
               *(n for n in calls.values() if n)]
    if _LINE_BREAK_RE.search("".join(printed)):  # nvdisasm's text would hold it on more than one line
        raise _Untrusted("a symbol name with a line break")
    return texts, line_data, line_relocs, functions, labels, calls


def _read_cubin(path: str | Path) -> _Cubin:
    try:
        texts, line_data, line_relocs, functions, labels, calls = _elf_facts(path)
    except _Untrusted:
        raise
    except Exception as exc:  # noqa: BLE001 - a file elf_read does not read (ElfError), a bad index: fall back
        raise _Untrusted(f"ELF: {exc}") from exc
    rows_by_section: dict[str, dict[int, tuple[tuple[Row, ...], int]]] = {}
    sections = []
    memo: dict[tuple[int, int], tuple[tuple[str, int], ...]] = {}
    try:
        for seq in decode_line_table(line_data, line_relocs) if line_data else []:
            per = rows_by_section.setdefault(seq.section, {})
            for k, row in enumerate(seq.rows):
                per[row.address] = (seq.rows, k)  # the last row at an address counts
        for name, data in texts:
            if len(data) % 16:
                raise _Untrusted(f"{name} is {len(data)} bytes, not whole instructions")
            locations = section_locations(rows_by_section, name, len(data), memo)
            sections.append(_Section(name, data, labels.get(name, {}), locations))
    except LineTableError as exc:
        raise _Untrusted(str(exc)) from exc
    return _Cubin(tuple(sections), functions, calls)


def _functions(cubin: _Cubin, bases: Sequence[int], raw: Mapping[int, str], source: str | None) -> dict[str, FunctionSass]:
    """What parse_nvdisasm makes of the text ``nvdisasm -gi -c`` prints for ``cubin``, from the raw
    disassembly (blob offset -> instruction text) of its sections, placed at ``bases`` in the blob: the
    lines that text would hold handed to the parser's reader (sass.SassReader) without writing them: the
    instructions between two labels, with what their //## blocks say, as one run."""
    where = {base: sec.name for base, sec in zip(bases, cubin.sections)}
    sizes = {base: len(sec.data) for base, sec in zip(bases, cubin.sections)}
    starts = sorted(where)
    reader = SassReader(source)
    for base, sec in zip(bases, cubin.sections):
        reader.line(f'\t.section\t{sec.name},"ax",@progbits')
        size = len(sec.data)
        found = [raw.get(at) for at in range(base, base + size, 16)]
        if None in found:
            raise _Untrusted(f"{sec.name}+{found.index(None) * 16:#x} missing from the raw disassembly")
        texts = cast("list[str]", found)
        self_loops = set()
        for k in [k for k, text in enumerate(texts) if "CALL" in text or "BRA" in text]:
            text, off = texts[k], 16 * k
            if "CALL" in text and (m := _CALL_RE.search(text)):
                target = cubin.call_relocations.get((sec.name, off))
                if target is None and (sec.name, off) in cubin.call_relocations:
                    raise _Untrusted(f"{sec.name}+{off:#x}: a CALL through a relocation not understood")
                if target is None:  # the function at that address, else a local label (.L_x_N), as nvdisasm
                    address = int(m.group(2), 16)
                    at = max((s for s in starts if s <= address), default=None)
                    if at is None or address - at >= sizes[at]:
                        raise _Untrusted(f"{sec.name}+{off:#x}: a CALL out of the cubin")
                    target = cubin.functions.get((where[at], address - at), f".L_x_{address - at:x}")
                texts[k] = f"{text[:m.start()]}{m.group(1)}`({target}){text[m.end():]}"
            elif "BRA" in text and (m := _BRA_RE.match(text)) and int(m.group(2), 16) == base + off:
                self_loops.add(k)
                texts[k] = f"{m.group(1)}`({_SELF_LABEL}){text[m.end():]}"
        labels = sec.labels
        start = 0
        for k in sorted({o // 16 for o in labels if not o % 16 and 0 <= o < size} | self_loops):
            reader.run(16 * start, texts[start:k], sec.locations)
            if 16 * k in labels:
                reader.line(f"{labels[16 * k]}:")
            if k in self_loops:
                reader.line(f"{_SELF_LABEL}:")
            start = k
        reader.run(16 * start, texts[start:], sec.locations)
    return reader.result()


def _raw_disassembly(nvdisasm: str, arch: str, blob: bytes, env: Mapping[str, str] | None) -> dict[int, str] | None:
    """Blob offset -> instruction text from one ``nvdisasm -b ARCH -c -ndf`` call; None if it fails."""
    with tempfile.TemporaryDirectory(prefix="cudalens-sass-") as tmp:
        path = os.path.join(tmp, "text.bin")
        with open(path, "wb") as fh:
            fh.write(blob)
        try:
            done = subprocess.run([nvdisasm, "-b", arch, "-c", "-ndf", path], capture_output=True, text=True,
                                  timeout=600, env=None if env is None else dict(env), errors="replace", check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
    return _raw_lines(done.stdout) if done.returncode == 0 else None


def _raw_lines(text: str) -> dict[int, str]:
    """Offset -> instruction text of each line of ``text`` that _RAW_INSN_RE reads. Text of plain ASCII
    whose only whitespace is spaces, tabs and line feeds (what nvdisasm prints) is read at once, by one
    search over it; other text line by line (the same answer, test_sass_elf pins it)."""
    if text.isascii() and not _ODD_SPACE_RE.search(text):
        return {int(offset, 16): insn for offset, insn in _RAW_LINES_RE.findall(text)}
    out = {}
    for line in text.splitlines():
        if m := _RAW_INSN_RE.match(line):
            out[int(m.group(1), 16)] = m.group(2)
    return out


def disassemble_batch(nvdisasm: str, cc: str, items: Sequence[tuple[str | Path, str | None]],
                      env: Mapping[str, str] | None = None) -> Disassembled:
    """:func:`disassemble_many`, with the items that fell back to the per-cubin command and why. The cycle
    collector is paused meanwhile: the line tables' rows and the instructions are 10^5 objects, in no cycle."""
    with collector_paused():
        return _batch(nvdisasm, cc, items, env)


def _batch(nvdisasm: str, cc: str, items: Sequence[tuple[str | Path, str | None]],
           env: Mapping[str, str] | None) -> Disassembled:
    reasons: dict[int, str] = {}
    cubins: dict[int, _Cubin] = {}
    arch = raw_arch(cc)
    for i, (path, _) in enumerate(items):
        if arch is None:
            reasons[i] = f"no raw-binary architecture for {cc}"
            continue
        try:
            cubins[i] = _read_cubin(path)
        except _Untrusted as exc:
            reasons[i] = str(exc)
    bases: dict[int, list[int]] = {}
    chunks: list[bytes] = []
    size = 0
    for i, cubin in cubins.items():
        bases[i] = []
        for sec in cubin.sections:
            bases[i].append(size)
            chunks.append(sec.data)
            size += len(sec.data)
    raw = _raw_disassembly(nvdisasm, arch, b"".join(chunks), env) if cubins and arch else None
    results: list[dict[str, FunctionSass] | None] = [None] * len(items)
    for i, cubin in cubins.items():
        if raw is None:
            reasons[i] = "the raw nvdisasm call failed"
            continue
        try:
            results[i] = _functions(cubin, bases[i], raw, items[i][1])
        except _Untrusted as exc:
            reasons[i] = str(exc)
    for i in reasons:
        results[i] = disassemble_one(nvdisasm, items[i][0], cc, items[i][1], env)
    return Disassembled(tuple(r if r is not None else {} for r in results), dict(sorted(reasons.items())))


def disassemble_many(nvdisasm: str, cc: str, items: Sequence[tuple[str | Path, str | None]],
                     env: Mapping[str, str] | None = None) -> list[dict[str, FunctionSass]]:
    """For each (cubin, analyzed source file): exactly ``parse_nvdisasm`` of ``nvdisasm -gi -c -ndf CUBIN``,
    with one nvdisasm start for all of them (see the module docstring; :func:`disassemble_batch` also
    says which items fell back to their own call). Raises ToolchainError where a per-cubin call fails."""
    return list(disassemble_batch(nvdisasm, cc, items, env).results)
