"""The line table of a cubin (``.debug_line``), decoded the way ``nvdisasm -gi`` reads it.

What nvcc writes (checked against nvdisasm 13.2 on sm_90 cubins; sass_elf.py relies on each point):

* DWARF version 2, 32-bit format. Another version, the 64-bit format, a standard opcode this decoder
  does not know, a standard opcode whose operand count differs from DWARF 2's, or an extended opcode
  other than the three below raise :class:`LineTableError` (the caller then asks nvdisasm itself).
* ``DW_LNE_set_address`` (extended opcode 2) holds no address in the cubin: its operand is relocated
  by ``.rela.debug_line`` (sm_90 on: the symbol of a ``.text.<mangled>`` section plus an addend; the
  operand bytes are zero) or ``.rel.debug_line`` (sm_75..sm_89: the symbol; the addend is the operand).
  ``relocated`` maps the operand's offset in the section to (section name, value, whether the operand
  holds the addend); an operand that is not zero where it should be, or a set_address without a
  relocation, raises.
* NVIDIA's extended opcode 0x90 sets the "inlined at" row of the rows that follow: its first ULEB is a
  1-based index into the rows of the CURRENT sequence (0: not inlined). Its second ULEB, an offset into
  ``.debug_str`` (the inlined function's name), is not needed.
* ``DW_LNE_end_sequence`` (extended opcode 1) ends a sequence; its row (the end address) is not kept.
* A file's name is its include directory + "/" + its name (directory index 0 or an absolute name:
  the name alone).

How nvdisasm -gi prints them (:func:`section_locations`): per address the LAST row at that address counts;
a ``//##`` block is printed only where its (file, line) differs from the last printed one of the section,
and it holds the inlining chain innermost first, each element with its immediate inlined-at row:
``//## File "a.h", line 3 inlined at "k.cu", line 9``. The block is not written: what its lines say
is given as (file, line) pairs, as sass.parse_nvdisasm reads them (:func:`chain_locations`).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

NVIDIA_INLINED_AT = 0x90
# DWARF 2's standard opcodes 1..9 and their ULEB operand counts (9, fixed_advance_pc, has one uhalf).
_LINE_BREAK_RE = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # where str.splitlines splits
_STANDARD_OPERANDS = {1: 0, 2: 1, 3: 1, 4: 1, 5: 1, 6: 0, 7: 0, 8: 0, 9: 1}


class LineTableError(ValueError):
    """The line table holds something this decoder does not know: its reading cannot be trusted."""


class Row(NamedTuple):
    """One row of a line-table sequence (a named tuple: a cubin has 10^5 of them, made fast)."""

    address: int
    file: str
    line: int
    inlined_at: int  # 1-based index of the row (same sequence) this one is inlined at; 0: not inlined


@dataclass(frozen=True)
class LineSequence:
    """The rows of one sequence; ``section`` is the ``.text.*`` section its set_address named."""

    section: str
    rows: tuple[Row, ...]


def _leb(data: bytes, i: int, signed: bool = False) -> tuple[int, int]:
    """(the LEB128 number at ``data[i]``, the offset after it)."""
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return (value - (1 << shift) if signed and b & 0x40 else value), i


def _uleb(data: bytes, i: int) -> tuple[int, int]:
    return _leb(data, i)


def _sleb(data: bytes, i: int) -> tuple[int, int]:
    return _leb(data, i, signed=True)


def _cstring(data: bytes, i: int) -> tuple[str, int]:
    end = data.index(0, i)
    return data[i:end].decode(), end + 1


def decode_line_table(data: bytes, relocated: Mapping[int, tuple[str, int, bool]]) -> list[LineSequence]:
    """Every sequence of every line program in ``data`` (the ``.debug_line`` section's bytes).

    ``relocated``: offset of a set_address operand in ``data`` -> (section name, the relocation's value,
    whether the operand holds the addend (REL) rather than zero (RELA)).
    Raises :class:`LineTableError` where the reading cannot be trusted (see the module docstring)."""
    try:
        out: list[LineSequence] = []
        i = 0
        while i < len(data):
            i = _program(data, i, relocated, out)
        return out
    except (IndexError, ValueError, struct.error) as exc:
        if isinstance(exc, LineTableError):
            raise
        raise LineTableError(f"malformed .debug_line: {exc}") from exc


def _header(data: bytes, i: int) -> tuple[int, int, int, int, int, int, list[str]]:
    """(end of the program, its first opcode, min_inst_length, line_base, line_range, opcode_base, files)."""
    unit_length, version, header_length = struct.unpack_from("<IHI", data, i)
    if unit_length >= 0xFFFFFFF0:
        raise LineTableError("64-bit DWARF line table")
    if version != 2:
        raise LineTableError(f"DWARF line table version {version}")
    end, program = i + 4 + unit_length, i + 10 + header_length
    p = i + 10
    min_len, _default_is_stmt, line_base, line_range, opcode_base = struct.unpack_from("<BBbBB", data, p)
    p += 5
    if line_range == 0 or opcode_base == 0:
        raise LineTableError("line_range or opcode_base 0")
    for op, count in enumerate(data[p:p + opcode_base - 1], start=1):
        if op in _STANDARD_OPERANDS and count != _STANDARD_OPERANDS[op]:
            raise LineTableError(f"standard opcode {op} with {count} operands")
    p += opcode_base - 1
    dirs: list[str] = []
    while data[p]:
        name, p = _cstring(data, p)
        dirs.append(name)
    p += 1
    files: list[str] = []
    while data[p]:
        name, p = _cstring(data, p)
        d, p = _uleb(data, p)
        _, p = _uleb(data, p)  # modification time
        _, p = _uleb(data, p)  # length
        if d > len(dirs):
            raise LineTableError(f"file {name!r} names directory {d} of {len(dirs)}")
        files.append(name if d == 0 or name.startswith("/") else f"{dirs[d - 1]}/{name}")
        if _LINE_BREAK_RE.search(files[-1]) or '"' in files[-1]:  # //## lines quote it, one line each
            raise LineTableError(f"file name {files[-1]!r} with a quote or a line break")
    if end > len(data) or program > end:
        raise LineTableError("line program runs past its section")
    return end, program, min_len, line_base, line_range, opcode_base, files


def _program(data: bytes, i: int, relocated: Mapping[int, tuple[str, int, bool]], out: list[LineSequence]) -> int:
    """Decode the line program at ``i`` into ``out``; the offset of the next one. (The loop runs once per
    opcode, 10^5 times a cubin: the special opcodes' advances are worked out once, and the one-byte LEB128
    operands, nearly all of them, are read in place.)"""
    end, p, min_len, line_base, line_range, opcode_base, files = _header(data, i)
    rows: list[Row] = []
    section: str | None = None
    address, file, line, inlined = 0, 1, 1, 0
    nfiles = len(files)
    step: list[tuple[int, int]] = [(0, 0)] * 256  # special opcode -> (address advance, line advance)
    for op in range(opcode_base, 256):
        step[op] = ((op - opcode_base) // line_range) * min_len, line_base + (op - opcode_base) % line_range

    while p < end:
        op = data[p]
        p += 1
        if op >= opcode_base:  # special opcode
            da, dl = step[op]
            address += da
            line += dl
            if section is None or not 1 <= file <= nfiles:
                _bad_row(section, file, nfiles)
            rows.append(Row(address, files[file - 1], line, inlined))
        elif op == 0:  # extended opcode
            length, p = _uleb(data, p)
            if length == 0 or p + length > end:
                raise LineTableError("extended opcode runs past its program")
            ext, q, p = data[p], p + 1, p + length
            if ext == 1:  # end_sequence
                if section is not None:
                    out.append(LineSequence(section, tuple(rows)))
                rows, section, address, file, line, inlined = [], None, 0, 1, 1, 0
            elif ext == 2:  # set_address
                if q not in relocated:
                    raise LineTableError(f"set_address at {q:#x} without a relocation")
                new_section, address, in_place = relocated[q]
                if in_place:
                    address += int.from_bytes(data[q:p], "little")
                elif any(data[q:p]):
                    raise LineTableError(f"set_address at {q:#x} holds a value besides its relocation")
                if section is not None and new_section != section:
                    raise LineTableError("set_address moves a sequence to another section")
                section = new_section
            elif ext == NVIDIA_INLINED_AT:
                inlined, q = _uleb(data, q)
                if q > p:
                    raise LineTableError("inlined-at operand runs past its opcode")
            else:
                raise LineTableError(f"extended opcode {ext:#x}")
        elif op == 1:  # copy
            if section is None or not 1 <= file <= nfiles:
                _bad_row(section, file, nfiles)
            rows.append(Row(address, files[file - 1], line, inlined))
        elif op == 2:  # advance_pc
            v = data[p]
            if v < 0x80:
                p += 1
            else:
                v, p = _uleb(data, p)
            address += v * min_len
        elif op == 3:  # advance_line
            v = data[p]
            if v < 0x80:
                p += 1
                line += v - 0x80 if v & 0x40 else v
            else:
                v, p = _sleb(data, p)
                line += v
        elif op == 4:  # set_file
            file = data[p]
            if file < 0x80:
                p += 1
            else:
                file, p = _uleb(data, p)
        elif op == 5:  # set_column
            if data[p] < 0x80:
                p += 1
            else:
                _, p = _uleb(data, p)
        elif op in (6, 7):  # negate_stmt, set_basic_block
            pass
        elif op == 8:  # const_add_pc
            address += ((255 - opcode_base) // line_range) * min_len
        elif op == 9:  # fixed_advance_pc
            address += struct.unpack_from("<H", data, p)[0]
            p += 2
        else:
            raise LineTableError(f"standard opcode {op}")
    if rows or section is not None:
        raise LineTableError("a sequence without end_sequence")
    return end


def _bad_row(section: str | None, file: int, nfiles: int) -> None:
    """A row where the program has no section yet, or names a file it does not list: raises."""
    if section is None:
        raise LineTableError("a row before any set_address")
    raise LineTableError(f"file index {file} of {nfiles}")


def chain_locations(rows: tuple[Row, ...], k: int,
                    memo: dict[tuple[int, int], tuple[tuple[str, int], ...]] | None = None,
                    depth: int = 0) -> tuple[tuple[str, int], ...]:
    """What the //## lines of row ``k`` say, as (file, line) in the order they say it: one line per element
    of its inlining chain, innermost first, ``//## File "a.h", line 3 inlined at "k.cu", line 9`` (the
    element, then the row it is inlined at; that row's own line follows). These are the locations
    sass.parse_nvdisasm reads from such lines (sass._LOC_RE: each quoted file with its line), which holds
    because a file name here has no quote and no line break (_header refuses them) and no line is below 0
    (refused here). ``memo``: the chains already read, by (id(rows), row index)."""
    key = (id(rows), k)
    if memo is not None and key in memo:
        return memo[key]
    row = rows[k]
    if row.line < 0:
        raise LineTableError(f"line {row.line} in {row.file}")
    here = (row.file, row.line)
    if not row.inlined_at:
        got: tuple[tuple[str, int], ...] = (here,)
    elif not 1 <= row.inlined_at <= len(rows) or depth >= len(rows):
        raise LineTableError(f"inlined-at row {row.inlined_at} of {len(rows)} (or a cycle)")
    else:
        parent = rows[row.inlined_at - 1]
        got = (here, (parent.file, parent.line), *chain_locations(rows, row.inlined_at - 1, memo, depth + 1))
    if memo is not None:
        memo[key] = got
    return got


def section_locations(rows_by_section: Mapping[str, Mapping[int, tuple[tuple[Row, ...], int]]], name: str, size: int,
                      memo: dict[tuple[int, int], tuple[tuple[str, int], ...]] | None = None,
                      ) -> dict[int, tuple[tuple[str, int], ...]]:
    """Offset in section ``name`` (``size`` bytes) -> what the //## lines nvdisasm -gi prints before it say
    (:func:`chain_locations`): where the last row at an offset differs in (file, line) from the last printed one."""
    out: dict[int, tuple[tuple[str, int], ...]] = {}
    last: tuple[str, int] | None = None
    for address, (rows, k) in sorted(rows_by_section.get(name, {}).items()):
        if address >= size:
            continue  # the end of the section: no instruction to print it before
        if address % 16:
            raise LineTableError(f"a line row at {name}+{address:#x}, off an instruction")
        here = (rows[k].file, rows[k].line)
        if here != last:
            out[address] = chain_locations(rows, k, memo)
            last = here
    return out
