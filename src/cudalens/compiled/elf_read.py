"""The parts of a cubin's ELF file that :mod:`cudalens.compiled.sass_elf` reads: sections, symbols,
relocations, read with :mod:`struct`.

pyelftools reads the same (tests/compiled/test_sass_elf.py pins it: every fact sass_elf takes, on cubins
of sm_80 and sm_90), but as a generic reader it costs ~2 ms a cubin and ~45 ms to import: a sixth of a
cold ``check``'s compile process on llm.c (issue #29). Only what a cubin holds is read, as pyelftools
reads it: a little-endian ELF64 file. Anything else raises :class:`ElfError` (the caller then asks
nvdisasm itself): another class or byte order, extended section numbering, a table or a section past
the end of the file, a compressed or NOBITS section whose bytes are asked for, a symbol or relocation
table with entries of another size, a symbol table whose names are not in a string table.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL, SHT_DYNSYM = 2, 3, 4, 8, 9, 11
SHT_SUNW_LDYNSYM = 0x6FFFFFF3
SYMBOL_TABLES = frozenset({SHT_SYMTAB, SHT_DYNSYM, SHT_SUNW_LDYNSYM})  # pyelftools' SymbolTableSection
RELOCATION_TABLES = frozenset({SHT_REL, SHT_RELA})  # pyelftools' RelocationSection
STT_FUNC, STT_SECTION, STT_FILE = 2, 3, 4
_SHF_COMPRESSED = 0x800
_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
_REL = struct.Struct("<QQ")


class ElfError(ValueError):
    """The file is not what this reader reads (see the module docstring)."""


class Section(NamedTuple):
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    entsize: int


class Symbol(NamedTuple):
    name: str
    type: int  # st_info's low four bits (STT_FUNC ...)
    shndx: int  # the index of the section it is defined in (0: undefined; 0xff00 on: special)
    value: int


class Relocation(NamedTuple):
    offset: int
    symbol: int  # index into the symbol table
    addend: int | None  # None for a REL entry (the addend is in place)


class Elf:
    """A cubin's bytes, its section table read (:attr:`sections`, in file order)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        if len(data) < _HEADER.size or data[:4] != b"\x7fELF":
            raise ElfError("not an ELF file")
        if data[4] != 2 or data[5] != 1:
            raise ElfError("not a little-endian ELF64 file")
        *_, shoff, _flags, _ehsize, _phentsize, _phnum, shentsize, shnum, shstrndx = _HEADER.unpack_from(data)
        if shoff == 0:
            self.sections: list[Section] = []
            return
        if shnum == 0 or shstrndx >= 0xFF00 or shentsize != _SECTION.size:
            raise ElfError("extended section numbering or a section header of another size")
        if shoff + shnum * _SECTION.size > len(data):
            raise ElfError("the section table runs past the file")
        headers = [_SECTION.unpack_from(data, shoff + k * _SECTION.size) for k in range(shnum)]
        if shstrndx >= shnum:
            raise ElfError("no section name table")
        names_at = headers[shstrndx][4]
        self.sections = [Section(self.string(names_at + h[0]), h[1], h[2], h[4], h[5], h[6], h[9]) for h in headers]

    def string(self, at: int) -> str:
        """The NUL-terminated string at file offset ``at`` (as pyelftools: UTF-8, errors replaced; "" where
        no NUL ends it)."""
        end = self._data.find(b"\0", at)
        return self._data[at:end].decode("utf-8", errors="replace") if end >= 0 else ""

    def data(self, section: Section) -> bytes:
        """The section's bytes."""
        if section.type == SHT_NOBITS or section.flags & _SHF_COMPRESSED:
            raise ElfError(f"{section.name}: NOBITS or compressed")
        if section.offset + section.size > len(self._data):
            raise ElfError(f"{section.name} runs past the file")
        return self._data[section.offset:section.offset + section.size]

    def symbols(self, table: Section) -> list[Symbol]:
        """The symbols of a symbol table, named from the string table it links to."""
        if table.entsize != _SYMBOL.size or table.size % _SYMBOL.size:
            raise ElfError(f"{table.name}: entries of {table.entsize} bytes")
        if not 0 <= table.link < len(self.sections) or self.sections[table.link].type != SHT_STRTAB:
            raise ElfError(f"{table.name} links to no string table")
        names_at = self.sections[table.link].offset
        return [Symbol(self.string(names_at + name), info & 0xF, shndx, value)
                for name, info, _other, shndx, value, _size in _SYMBOL.iter_unpack(self.data(table))]

    def relocations(self, table: Section) -> list[Relocation]:
        """The entries of a REL or RELA table."""
        layout = _RELA if table.type == SHT_RELA else _REL
        if table.type not in RELOCATION_TABLES or table.entsize != layout.size or table.size % layout.size:
            raise ElfError(f"{table.name}: not a relocation table of {layout.size}-byte entries")
        if table.type == SHT_RELA:
            return [Relocation(off, info >> 32, addend) for off, info, addend in _RELA.iter_unpack(self.data(table))]
        return [Relocation(off, info >> 32, None) for off, info in _REL.iter_unpack(self.data(table))]
