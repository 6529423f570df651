"""Many cubins' SASS from one nvdisasm start (compiled/sass_elf.py) equals the per-cubin ``nvdisasm -gi -c``
parse, on kernels of our own that hold what real code has: a header's __forceinline__ helper inlined at
several lines, __ldg, a 64-bit division by a runtime value (the div_s64 subroutine), a float division's
slow path, several kernels and template instances in one unit, an unrolled loop, a __noinline__ call and
printf (relocated calls). The line-table decoder is also tested alone on hand-built bytes."""

from __future__ import annotations

import re
import struct
import subprocess
from pathlib import Path

import pytest

from cudalens.compiled import sass_elf
from cudalens.compiled.dwarf_lines import LineTableError, Row, chain_locations, decode_line_table, section_locations
from cudalens.compiled.sass import _LOC_RE, disassemble_one
from cudalens.compiled.sass_elf import disassemble_batch
from cudalens.errors import ToolchainError

HEADER = """#pragma once
// A helper inlined into the kernels at several call sites.
__device__ __forceinline__ float lens_scale(const float* p, int i, float s) {
  return __ldg(p + i) * s + 1.0f;
}
"""
UNIT_A = """#include "lens_math.h"

__global__ void lens_two_sites(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = lens_scale(in, i, 2.0f);
  float b = lens_scale(in, i + 1, 3.0f);
  out[i] = a / b;
}

__global__ void lens_div64(const long long* num, long long* q, long long d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) q[i] = num[i] / d;
}

template <int K>
__global__ void lens_unrolled(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    acc += lens_scale(in, (i + k) % n, 0.5f);
  }
  out[i] = acc;
}

template __global__ void lens_unrolled<4>(const float*, float*, int);
template __global__ void lens_unrolled<8>(const float*, float*, int);
"""
UNIT_B = """#include <cstdio>

__device__ __noinline__ float lens_far(float x, float y) { return x / y + 1.0f; }

__global__ void lens_calls(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = lens_far(in[i], in[n - 1 - i]);
  if (i == 0) printf("n=%d\\n", n);
}
"""
UNIT_90A = """__global__ void lens_warpgroup(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\\n");
  asm volatile("wgmma.commit_group.sync.aligned;\\n");
  asm volatile("wgmma.wait_group.sync.aligned 0;\\n");
  out[threadIdx.x] = 1.0f;
}
"""


@pytest.fixture(scope="module")
def units(wheel_toolchain, tmp_path_factory):
    """(nvdisasm, env, [(cubin, source)]): the units compiled once with line info, for sm_90 (the third,
    arch-specific warpgroup instructions, for sm_90a: still cc 9.0, disassembled as SM90)."""
    tmp = tmp_path_factory.mktemp("sass_elf")
    (tmp / "lens_math.h").write_text(HEADER)
    items = []
    for name, text, arch in (("unit_a", UNIT_A, "sm_90"), ("unit_b", UNIT_B, "sm_90"), ("unit_c", UNIT_90A, "sm_90a")):
        src, cubin = tmp / f"{name}.cu", tmp / f"{name}.cubin"
        src.write_text(text)
        done = subprocess.run([wheel_toolchain.get("nvcc").path, "-cubin", f"-arch={arch}", "-lineinfo", str(src),
                               "-o", str(cubin)], capture_output=True, text=True, env=wheel_toolchain.env(),
                              cwd=tmp, check=False)
        assert done.returncode == 0, done.stderr
        items.append((cubin, str(src)))
    return wheel_toolchain.get("nvdisasm").path, wheel_toolchain.env(), items


@pytest.fixture(scope="module")
def unit_sm80(units, wheel_toolchain):
    """unit_a compiled for sm_80: its line table is relocated through .rel.debug_line (addends in place)."""
    _, _, items = units
    src = Path(items[0][1])
    cubin = src.with_name("unit_a_sm80.cubin")
    done = subprocess.run([wheel_toolchain.get("nvcc").path, "-cubin", "-arch=sm_80", "-lineinfo", str(src),
                           "-o", str(cubin)], capture_output=True, text=True, env=wheel_toolchain.env(),
                          cwd=src.parent, check=False)
    assert done.returncode == 0, done.stderr
    return cubin, str(src)


def _reference(units, items=None):
    nvdisasm, env, default = units
    return [disassemble_one(nvdisasm, cubin, "9.0", source, env) for cubin, source in (items or default)]


def test_the_kernels_hold_the_patterns(units):
    """The comparison below means something only if the SASS has what the kernels were written for."""
    a, b, c = _reference(units)
    two = a["_Z14lens_two_sitesPKfPfi"]
    header_lines = {i.line for i in two.instructions if i.written and i.written[0].endswith("lens_math.h")}
    assert {6, 7} <= header_lines  # the helper, inlined at both lines of the unit
    assert any(i.opcode.startswith("LDG.E.CONSTANT") for i in two.instructions)  # __ldg
    assert two.counts().get("slowpath_call") == 1
    assert a["_Z10lens_div64PKxPxxi"].counts().get("int_div", 0) >= 1
    assert {"_Z13lens_unrolledILi4EEvPKfPfi", "_Z13lens_unrolledILi8EEvPKfPfi"} <= set(a)
    assert a["_Z13lens_unrolledILi8EEvPKfPfi"].counts()["ldg.32"] == 8  # unrolled: one load per step
    calls = b["_Z10lens_callsPfPKfi"].counts()
    assert calls.get("call", 0) >= 2 and calls.get("slowpath_call") == 1  # lens_far, printf; the division
    assert any(i.opcode.startswith("WARPGROUP.") for i in c["_Z14lens_warpgroupPf"].instructions)


@pytest.mark.parametrize("with_source", [True, False], ids=["source", "every_file"])
def test_one_start_equals_the_per_cubin_parse(units, with_source):
    nvdisasm, env, items = units
    if not with_source:
        items = [(cubin, None) for cubin, _ in items]
    batch = disassemble_batch(nvdisasm, "9.0", items, env)
    assert batch.fell_back == {}
    assert list(batch.results) == _reference(units, items)
    assert sass_elf.disassemble_many(nvdisasm, "9.0", items, env) == list(batch.results)


def test_sm80_line_tables_through_rel_relocations(units, unit_sm80):
    nvdisasm, env, _ = units
    from elftools.elf.elffile import ELFFile

    with open(unit_sm80[0], "rb") as fh:
        assert ELFFile(fh).get_section_by_name(".rel.debug_line") is not None
    batch = disassemble_batch(nvdisasm, "8.0", [unit_sm80], env)
    assert batch.fell_back == {}
    assert list(batch.results) == [disassemble_one(nvdisasm, unit_sm80[0], "8.0", unit_sm80[1], env)]


def test_one_nvdisasm_start_for_all(units, monkeypatch):
    nvdisasm, env, items = units
    calls = []
    real = subprocess.run

    def counting(cmd, *args, **kwargs):
        calls.append(cmd)
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(sass_elf.subprocess, "run", counting)
    disassemble_batch(nvdisasm, "9.0", items * 3, env)
    assert len(calls) == 1 and calls[0][1:3] == ["-b", "SM90"]


def test_an_unknown_extended_opcode_falls_back(units, tmp_path):
    """NVIDIA's inlined-at opcode 0x90 turned into 0x91 in a copy: that cubin asks nvdisasm itself."""
    nvdisasm, env, items = units
    data = bytearray(items[0][0].read_bytes())
    from elftools.elf.elffile import ELFFile

    with open(items[0][0], "rb") as fh:
        sec = ELFFile(fh).get_section_by_name(".debug_line")
        start, size = sec["sh_offset"], sec["sh_size"]
    m = re.search(rb"\x00[\x02-\x06]\x90", bytes(data[start:start + size]))
    assert m is not None
    data[start + m.start() + 2] = 0x91
    patched = tmp_path / "patched.cubin"
    patched.write_bytes(bytes(data))
    mixed = [(patched, items[0][1]), items[1]]
    batch = disassemble_batch(nvdisasm, "9.0", mixed, env)
    assert list(batch.fell_back) == [0] and "0x91" in batch.fell_back[0]
    assert list(batch.results) == _reference(units, mixed)


def test_everything_falls_back_without_a_raw_architecture_or_raw_call(units, monkeypatch):
    nvdisasm, env, items = units
    assert sass_elf.raw_arch("7.0") is None and sass_elf.raw_arch("9.0") == "SM90" and sass_elf.raw_arch("12.1")
    batch = disassemble_batch(nvdisasm, "7.0", items, env)
    assert sorted(batch.fell_back) == [0, 1, 2] and list(batch.results) == _reference(units)
    monkeypatch.setattr(sass_elf, "_raw_disassembly", lambda *a: None)
    batch = disassemble_batch(nvdisasm, "9.0", items, env)
    assert sorted(batch.fell_back) == [0, 1, 2] and list(batch.results) == _reference(units)


# ---- the line-table decoder alone, on hand-built bytes ------------------------------------------------

def _uleb(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _program(body: bytes, opcode_base: int = 10) -> bytes:
    """A DWARF 2 line program (min_inst_length 1, line_base -5, line_range 14) with directory "/inc" and
    files 1 "/src/k.cu", 2 "h.h" (in /inc)."""
    head = bytes([1, 1, 0xFB, 14, opcode_base]) + bytes([0, 1, 1, 1, 1, 0, 0, 0, 1] + [0] * (opcode_base - 10))
    head += b"/inc\0\0" + b"/src/k.cu\0" + bytes([0, 0, 0]) + b"h.h\0" + bytes([1, 0, 0]) + b"\0"
    unit = struct.pack("<HI", 2, len(head)) + head + body
    return struct.pack("<I", len(unit)) + unit


SET_ADDRESS = b"\x00\x09\x02" + bytes(8)


def _chain_body(inlined_op: int = 0x90) -> bytes:
    def inlined(row: int) -> bytes:
        operand = _uleb(row) + _uleb(0)
        return b"\x00" + _uleb(1 + len(operand)) + bytes([inlined_op]) + operand

    return (SET_ADDRESS + b"\x03" + _uleb(9) + b"\x01"  # row 1: 0x0 k.cu:10
            + b"\x02" + _uleb(16) + b"\x03" + _uleb(10) + b"\x01"  # row 2: 0x10 k.cu:20
            + inlined(2) + b"\x04\x02\x03\x70\x01"  # row 3: 0x10 h.h:4 inlined at row 2
            + b"\x02" + _uleb(16) + inlined(0) + b"\x04\x01\x03\x0b\x01"  # row 4: 0x20 k.cu:15
            + b"\x00\x01\x01")


def test_the_decoder_follows_the_inlined_at_chain():
    data = _program(_chain_body())
    operand = data.index(SET_ADDRESS) + 3
    [seq] = decode_line_table(data, {operand: (".text.k", 0x100, False)})
    assert seq.section == ".text.k"
    assert seq.rows == (Row(0x100, "/src/k.cu", 10, 0), Row(0x110, "/src/k.cu", 20, 0),
                        Row(0x110, "/inc/h.h", 4, 2), Row(0x120, "/src/k.cu", 15, 0))
    # the //## lines nvdisasm prints for row 3, and the (file, line) pairs the text parse reads from them
    printed = ('\t//## File "/inc/h.h", line 4 inlined at "/src/k.cu", line 20', '\t//## File "/src/k.cu", line 20')
    assert chain_locations(seq.rows, 2) == tuple((f, int(n)) for t in printed for f, n in _LOC_RE.findall(t.strip()))
    assert chain_locations(seq.rows, 2) == (("/inc/h.h", 4), ("/src/k.cu", 20), ("/src/k.cu", 20))
    # the last row at an address counts; a block only where (file, line) changes
    blocks = section_locations({".text.k": {r.address - 0x100: (seq.rows, k) for k, r in enumerate(seq.rows)}},
                               ".text.k", 0x30)
    assert sorted(blocks) == [0x0, 0x10, 0x20] and blocks[0x10][0] == ("/inc/h.h", 4)


def test_the_decoder_adds_an_in_place_addend_only_for_rel():
    """sm_75..sm_89 cubins relocate set_address through .rel.debug_line: the operand holds the addend."""
    data = _program(_chain_body()).replace(SET_ADDRESS, b"\x00\x09\x02" + (0x40).to_bytes(8, "little"))
    operand = data.index(b"\x00\x09\x02") + 3
    [seq] = decode_line_table(data, {operand: (".text.k", 0x100, True)})
    assert [r.address for r in seq.rows] == [0x140, 0x150, 0x150, 0x160]
    with pytest.raises(LineTableError, match="besides its relocation"):
        decode_line_table(data, {operand: (".text.k", 0x100, False)})


def test_the_decoder_refuses_what_it_does_not_know():
    data = _program(_chain_body(inlined_op=0x91))
    operand = data.index(SET_ADDRESS) + 3
    with pytest.raises(LineTableError, match="0x91"):
        decode_line_table(data, {operand: (".text.k", 0, False)})
    good = _program(_chain_body())
    with pytest.raises(LineTableError, match="without a relocation"):
        decode_line_table(good, {})
    with pytest.raises(LineTableError, match="version 3"):
        decode_line_table(good[:4] + struct.pack("<H", 3) + good[6:], {operand: (".text.k", 0, False)})
    with pytest.raises(LineTableError, match="standard opcode 12"):  # opcode_base 13: 10..12 standard ones
        data = _program(SET_ADDRESS + b"\x0c" + b"\x00\x01\x01", opcode_base=13)
        decode_line_table(data, {data.index(SET_ADDRESS) + 3: (".text.k", 0, False)})


def test_an_unreadable_cubin_raises_as_the_per_cubin_path_does(units, tmp_path):
    """A truncated cubin: elf_read cannot read it (fall back), then nvdisasm fails on it: ToolchainError."""
    nvdisasm, env, items = units
    broken = tmp_path / "broken.cubin"
    broken.write_bytes(items[0][0].read_bytes()[:3000])
    with pytest.raises(sass_elf._Untrusted, match="ELF"):
        sass_elf._read_cubin(broken)
    with pytest.raises(ToolchainError, match="nvdisasm failed"):
        disassemble_batch(nvdisasm, "9.0", [items[1], (broken, None)], env)


def test_the_decoder_reads_operands_of_several_bytes():
    """advance_pc, advance_line (both signs) and set_file with LEB128 operands longer than a byte."""
    body = (SET_ADDRESS + b"\x03" + _sleb(99) + b"\x01"  # 0x0 k.cu:100
            + b"\x02" + _uleb(300) + b"\x03" + _sleb(-70) + b"\x01"  # 0x12c k.cu:30
            + b"\x04" + b"\x82\x00" + b"\x03" + _sleb(-64) + b"\x01"  # set_file 2 in two bytes; h.h:-34
            + b"\x03" + _sleb(8000) + b"\x01" + b"\x00\x01\x01")
    data = _program(body)
    [seq] = decode_line_table(data, {data.index(SET_ADDRESS) + 3: (".text.k", 0, False)})
    assert seq.rows == (Row(0, "/src/k.cu", 100, 0), Row(300, "/src/k.cu", 30, 0), Row(300, "/inc/h.h", -34, 0),
                        Row(300, "/inc/h.h", 7966, 0))


def _sleb(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        done = (v == 0 and not b & 0x40) or (v == -1 and b & 0x40)
        out.append(b | (0 if done else 0x80))
        if done:
            return bytes(out)


@pytest.mark.parametrize("name", [b"h\rh", b'h"h'])
def test_a_file_name_with_a_line_break_or_a_quote_is_refused(name):
    """What a //## line says is read as the text parse reads it only where the line is one line and each quoted
    file name ends at its closing quote: another name sends the cubin to nvdisasm itself."""
    data = _program(_chain_body()).replace(b"h.h\0", name + b"\0")
    with pytest.raises(LineTableError, match="quote or a line break"):
        decode_line_table(data, {data.index(SET_ADDRESS) + 3: (".text.k", 0, False)})


def test_a_line_below_zero_is_refused():
    """``line -3`` is not what the text parse reads as a location: such a row sends the cubin to nvdisasm."""
    body = SET_ADDRESS + b"\x03" + _sleb(-5) + b"\x01" + b"\x00\x01\x01"  # 0x0 k.cu:-4
    data = _program(body)
    [seq] = decode_line_table(data, {data.index(SET_ADDRESS) + 3: (".text.k", 0, False)})
    with pytest.raises(LineTableError, match="line -4"):
        section_locations({".text.k": {0: (seq.rows, 0)}}, ".text.k", 0x10)


@pytest.mark.parametrize("text", [
    "\t.headerflags\t@\"EF_CUDA_SM90\"\n        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
    "        /*0010*/               @P0 EXIT ;   \n  /*0020*/\tBRA 0x20 ;\n/*0030*/    \n/*40*/x\n/*0050*/ A  B\t\t",
    "        /*0000*/    MOV R1 ;\r\n        /*0010*/    NOP ;\x0c\n/*0020*/ X\x1cY\n",  # line breaks besides \\n
    "        /*0000*/    MOV R1, \u00e9 ;\n        /*0010*/\u2028NOP ;\n/*0020*/\u00a0Y\u00a0\n",  # not ASCII
    "",
])
def test_the_raw_output_read_at_once_equals_the_reading_line_by_line(text):
    by_line = {}
    for line in text.splitlines():
        if m := sass_elf._RAW_INSN_RE.match(line):
            by_line[int(m.group(1), 16)] = m.group(2)
    assert sass_elf._raw_lines(text) == by_line


def test_elf_read_gives_what_pyelftools_gives(units, unit_sm80):
    """sass_elf reads the cubin with elf_read (struct), not pyelftools: the same facts, sm_90 (RELA) and sm_80
    (REL relocations)."""
    pytest.importorskip("elftools")
    _, _, items = units
    for cubin in [c for c, _ in items] + [unit_sm80[0]]:
        assert sass_elf._elf_facts(cubin) == _pyelftools_facts(cubin)


def _pyelftools_facts(path):
    """sass_elf._elf_facts as it was written with pyelftools (the reference)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.relocation import RelocationSection
    from elftools.elf.sections import SymbolTableSection

    with open(path, "rb") as fh:
        all_sections = list(ELFFile(fh).iter_sections())
        names = [s.name for s in all_sections]
        by_name = {s.name: s for s in all_sections}
        symtab = by_name.get(".symtab")
        assert isinstance(symtab, SymbolTableSection)
        symbols = list(symtab.iter_symbols())

        def where(sym):
            shndx = sym["st_shndx"]
            return (names[shndx], sym["st_value"]) if isinstance(shndx, int) and 0 < shndx < len(names) else None

        def relocations(section_name):
            sec = by_name.get(f".rela{section_name}", by_name.get(f".rel{section_name}"))
            assert sec is None or isinstance(sec, RelocationSection)
            out = {}
            for rel in sec.iter_relocations() if sec is not None else ():
                sym = symbols[rel["r_info_sym"]]
                named = sym.name if sym["st_info"]["type"] != "STT_SECTION" else ""
                out[rel["r_offset"]] = (named, where(sym), rel["r_addend"] if rel.is_RELA() else None)
            return out

        texts = [(s.name, s.data()) for s in all_sections if s.name.startswith(".text.")]
        line_data = by_name[".debug_line"].data() if ".debug_line" in by_name else b""
        line_relocs = {off: (at[0], at[1] + (addend or 0), addend is None)
                       for off, (_, at, addend) in relocations(".debug_line").items()}
        functions, labels = {}, {}
        for sym in symbols:
            at, kind = where(sym), sym["st_info"]["type"]
            if at is None or not sym.name or kind in ("STT_SECTION", "STT_FILE"):
                continue
            if kind == "STT_FUNC":
                functions.setdefault(at, sym.name)
            if at[1] and at[0].startswith(".text."):
                labels.setdefault(at[0], {}).setdefault(at[1], sym.name)
        calls = {}
        for name, _ in texts:
            for off, (sym_name, at, addend) in relocations(name).items():
                target = sym_name if sym_name and not addend else None
                if target is None and at is not None and addend is not None:
                    target = functions.get((at[0], at[1] + addend))
                calls[(name, off - off % 16)] = target or None
    return texts, line_data, line_relocs, functions, labels, calls


def test_counts_and_lines_count_as_one_instruction_at_a_time_does(units):
    """FunctionSass.counts and .by_line count with Counter over the fields: the same dicts, in the same
    order, as counting one instruction at a time."""
    from collections import Counter, defaultdict

    for per_cubin in _reference(units):
        for fs in per_cubin.values():
            counts = Counter(i.klass for i in fs.instructions if i.klass)
            lines: dict = defaultdict(Counter)
            for i in fs.instructions:
                if i.klass and i.line is not None:
                    lines[i.line][i.klass] += 1
            expected = {line: dict(sorted(c.items())) for line, c in sorted(lines.items())}
            assert list(fs.counts().items()) == sorted(counts.items())
            assert [(k, list(v.items())) for k, v in fs.by_line().items()] == [(k, list(v.items()))
                                                                                 for k, v in expected.items()]
