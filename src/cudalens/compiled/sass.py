"""SASS facts from ``nvdisasm -gi -c``: instructions per kernel, classified, mapped to source lines.

``-gi`` prints a comment before each group of instructions::

    //## File "/abs/k.cu", line 2 inlined at "/abs/k.cu", line 22

The first location is where the code is written (innermost), the "inlined at" ones are the call
sites. An instruction is attributed to the innermost location that lies in the analyzed file
(so code inlined from a CUDA header lands on the user's line that called it).

Classes counted (``classify``):

* ``ldg.8/16/32/64/128/256``, ``stg.<width>``: global loads/stores by access width in bits
  (``LDG.E.U8`` is 8, ``LDG.E`` is 32, ``LDG.E.128`` is 128).
* ``ldl``/``stl`` local memory, ``lds.<bits>``/``sts`` shared memory (``ldsm`` matrix loads), ``ld``/``st`` generic addressing,
  ``atom`` atomics and reductions.
* ``fp64``: double-precision arithmetic (DADD, DMUL, DFMA, DSETP, DMNMX, DMMA ...) and
  conversions between integers and doubles (I2F.F64, F2I.*.F64).
* ``f2f``: float<->float conversions (F2F.F64.F32 widening a float to double and back, F2F.F16 ...).
* ``fp32``/``fp16``: single/half precision arithmetic (FADD FMUL FFMA FMNMX / HADD2 HMUL2 HFMA2).
* ``mufu``: the multi-function unit (MUFU.RCP, .RSQ, .SIN, .EX2, .LG2 ...).
* ``slowpath_call``: a call to one of libdevice's accurate slow paths (``..._slowpath``: full
  precision division, square root, ...).
* ``int_div``: an integer division or modulo by a value unknown at compile time. Detection: a 32-bit
  division is inlined as a reciprocal estimate that starts by converting the divisor with
  round-toward-+inf, ``I2F.RP`` (or ``I2F.U32.RP``), followed by ``MUFU.RCP`` and ``IMAD.HI``
  corrections; ``I2F`` with ``.RP`` appears in no other common idiom, so each one counts one
  division sequence (a quotient and a remainder of the same operands share one). A 64-bit division
  is a call to a subroutine named ``__cuda_sm20_div_s64``/``_u64`` or ``__cuda_sm20_rem_*``; each
  call counts one. Division by a constant becomes a multiply-high and is not counted (cheap).
* ``bar``: barriers (BAR.SYNC ...); ``branch``: BRA/BRX/JMP/JMX; ``reconverge``: BSSY/BSYNC;
  ``call``: other CALLs.

The padding loop nvdisasm shows after the last EXIT (``.L_x_9: BRA .L_x_9``) is not counted.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from cudalens.compiled.model import Instruction
from cudalens.errors import ToolchainError

_SECTION_RE = re.compile(r"^\s*\.section\s+\.text\.(\S+?),")
_LOC_RE = re.compile(r'"([^"]+)", line (\d+)')
_INSN_RE = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)(.*)$")
# an instruction line's text after its offset, as _INSN_RE reads it: predicate, opcode, the rest
_TEXT_RE = re.compile(r"(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)(.*)$")
_LABEL_RE = re.compile(r"^(\S+):\s*$")
_TARGET_RE = re.compile(r"`\(([^)]+)\)")

_WIDTH = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128, "256": 256}
_FP64_OPS = {"DADD", "DMUL", "DFMA", "DSETP", "DSET", "DMNMX", "DMMA", "DMAX", "DMIN"}
_INT_DIV_SUB_RE = re.compile(r"__cuda_sm\d+x?_(?:div|rem)_[su]\d+")


def _width(mods: list[str]) -> int:
    for m in mods:
        if m in _WIDTH:
            return _WIDTH[m]
    return 32


def classify(opcode: str, operands: str = "", in_int_div_subroutine: bool = False) -> str | None:
    """The cudalens class of one SASS opcode (see the module docstring), or None."""
    parts = opcode.split(".")
    op, mods = parts[0], parts[1:]
    if op in ("LDG", "STG"):
        return f"{op.lower()}.{_width(mods)}"
    if op in ("LDL", "STL", "LD", "ST"):
        return op.lower()
    if op == "LDS":
        return f"lds.{_width(mods)}"  # the width shows when the compiler vectorized shared loads
    if op == "LDSM":
        return "ldsm"
    if op == "STS":
        return "sts"
    if op in ("ATOM", "ATOMG", "ATOMS", "RED", "REDG"):
        return "atom"
    if op in _FP64_OPS:
        return "fp64"
    if op == "F2F":
        return "f2f"
    if op in ("I2F", "F2I") and "F64" in mods:
        return "fp64"
    if op == "I2F" and "RP" in mods and not in_int_div_subroutine:
        return "int_div"
    if op == "MUFU":
        return "mufu"
    if op in ("FADD", "FMUL", "FFMA", "FMNMX"):
        return "fp32"
    if op in ("HADD2", "HMUL2", "HFMA2") and "MMA" not in mods:  # HFMA2.MMA is a move idiom
        return "fp16"
    if op == "BAR":
        return "bar"
    if op in ("BRA", "BRX", "JMP", "JMX"):
        return "branch"
    if op in ("BSSY", "BSYNC"):
        return "reconverge"
    if op == "CALL":
        if _INT_DIV_SUB_RE.search(operands):
            return "int_div"
        if "slowpath" in operands:
            return "slowpath_call"
        return "call"
    return None


@dataclass(frozen=True)
class FunctionSass:
    """The instructions of one .text section (one kernel with its internal subroutines)."""

    mangled: str
    instructions: tuple[Instruction, ...]

    def shared_widths(self) -> dict[str, dict[int, int]]:
        """"file name:line" where the code is written -> {bytes per lane: LDS instructions}."""
        out: dict[str, dict[int, int]] = {}
        for i in self.instructions:
            if i.klass and i.klass.startswith("lds.") and i.written is not None:
                per = out.setdefault(f"{os.path.basename(i.written[0])}:{i.written[1]}", {})
                w = int(i.klass.split(".")[1]) // 8
                per[w] = per.get(w, 0) + 1
        return out

    def counts(self) -> dict[str, int]:
        c = Counter(map(_KLASS, self.instructions))  # counted in C; the unclassified dropped after
        return dict(sorted((k, n) for k, n in c.items() if k))

    def by_line(self) -> dict[int, dict[str, int]]:
        c = Counter((i.line, i.klass) for i in self.instructions if i.klass and i.line is not None)
        out: dict[int, dict[str, int]] = {}
        for (line, klass), n in sorted(c.items()):
            out.setdefault(line, {})[klass] = n
        return out


_KLASS = attrgetter("klass")


def _same_file(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def parse_nvdisasm(text: str, source_path: str | None) -> dict[str, FunctionSass]:
    """Mangled function name -> its classified instructions, from ``nvdisasm -gi -c`` output.

    ``source_path`` is the analyzed file: only its lines are kept in line attribution."""
    reader = SassReader(source_path)
    for raw in text.splitlines():
        reader.line(raw)
    return reader.result()


class SassReader:
    """The reading of ``nvdisasm -gi -c`` text: :func:`parse_nvdisasm` hands it each line (:meth:`line`);
    :mod:`cudalens.compiled.sass_elf`, which knows the lines it would print, hands it their parts (:meth:`line`
    for a section or a label, :meth:`run` for the instructions and what the //## lines between say) without
    writing them."""

    def __init__(self, source_path: str | None) -> None:
        self._source = source_path
        self._functions: dict[str, list[Instruction]] = {}
        self.current: list[Instruction] | None = None  # the instructions of the section being read
        self._lines: tuple[int, ...] = ()  # the analyzed file's lines of the instructions now
        self._written: tuple[str, int] | None = None
        self._pending: tuple[tuple[str, int], ...] = ()  # locations of the //## lines since the last instruction
        self._last_label: str | None = None
        self._in_div_sub = False
        self._file_match: dict[str, bool] = {}
        self._locations: dict[str, tuple[tuple[str, int], ...]] = {}  # a "//##" line -> its locations
        self._at: dict[tuple[tuple[str, int], ...], tuple[tuple[int, ...], tuple[str, int]]] = {}
        self._by_opcode: dict[bool, dict[str, str | None]] = {}  # in a division subroutine? -> opcode -> class

    def line(self, raw: str) -> None:
        """One line of the text."""
        stripped = raw.strip()
        if stripped.startswith("//##"):  # the most common line: line info of the instructions below
            if self.current is not None:
                self._pending += self._comment(stripped)
            return
        if stripped.startswith(".section") and (m := _SECTION_RE.match(raw)):
            self.current = self._functions.setdefault(m.group(1), [])
            self._lines, self._pending, self._last_label, self._in_div_sub, self._written = (), (), None, False, None
            return
        if self.current is None:
            return
        if stripped.startswith("/*") and (m := _INSN_RE.match(raw)):
            self.instruction(int(m.group(1), 16), m.group(2), m.group(3))
            return
        if m := _LABEL_RE.match(stripped):
            label = m.group(1)
            self._last_label = label
            if label.startswith("$__internal"):
                self._in_div_sub = bool(_INT_DIV_SUB_RE.search(label))

    def _comment(self, stripped: str) -> tuple[tuple[str, int], ...]:
        got = self._locations.get(stripped)
        if got is None:
            got = self._locations[stripped] = tuple((f, int(n)) for f, n in _LOC_RE.findall(stripped))
        return got

    def _resolve(self, pending: tuple[tuple[str, int], ...]) -> tuple[tuple[int, ...], tuple[str, int]]:
        """(the analyzed file's lines, where the code is written) of the instructions after ``pending``."""
        source, match = self._source, self._file_match
        for f, _ in pending:
            if f not in match:
                match[f] = source is None or _same_file(f, source)
        got = self._at[pending] = (tuple(n for f, n in pending if match[f]), pending[0])
        return got

    def instruction(self, offset: int, opcode: str, rest: str) -> None:
        """An instruction line of the section being read (``rest``: the text after the opcode)."""
        if self._pending:
            self._lines, self._written = self._at.get(self._pending) or self._resolve(self._pending)
            self._pending = ()
        if opcode == "BRA" and (t := _TARGET_RE.search(rest)) and t.group(1) == self._last_label:
            self._last_label = None
            return  # the padding self-loop after EXIT
        self._last_label = None
        if opcode.startswith("CALL"):
            klass = classify(opcode, rest, self._in_div_sub)
        else:  # the class of any other opcode is the opcode's (in or out of a division subroutine)
            classes = self._by_opcode.setdefault(self._in_div_sub, {})
            klass = classes[opcode] if opcode in classes else classes.setdefault(opcode, classify(opcode, "", self._in_div_sub))
        lines = self._lines
        if self.current is not None:  # (line() reads instructions only in a section)
            self.current.append(Instruction(offset, opcode, klass, lines[0] if lines else None, lines, self._written))

    def run(self, offset: int, texts: Sequence[str], locations: Mapping[int, tuple[tuple[str, int], ...]]) -> None:
        """Instruction lines at ``offset``, ``offset + 16``, ... (``texts``: each line after its ``/*offset*/``),
        each after the ``//##`` lines whose (file, line) pairs ``locations`` holds for its offset (what
        :meth:`line` takes from them, in order), and no other line between them: what :meth:`line` does
        with each of these lines, in one loop."""
        if self.current is None:
            return
        pending, lines, written, last = self._pending, self._lines, self._written, self._last_label
        line = lines[0] if lines else None
        div, match, append, make = self._in_div_sub, _TEXT_RE.match, self.current.append, tuple.__new__
        classes = self._by_opcode.setdefault(div, {})
        for off, text in zip(range(offset, offset + 16 * len(texts), 16), texts):
            if locs := locations.get(off):
                pending += locs
            if not (m := match(text)):
                continue
            if pending:
                lines, written = self._at.get(pending) or self._resolve(pending)
                line = lines[0] if lines else None
                pending = ()
            opcode = m.group(1)
            if last is not None:
                if opcode == "BRA" and (t := _TARGET_RE.search(m.group(2))) and t.group(1) == last:
                    last = None
                    continue  # the padding self-loop after EXIT
                last = None
            if opcode.startswith("CALL"):
                klass = classify(opcode, m.group(2), div)
            else:
                klass = classes[opcode] if opcode in classes else classes.setdefault(opcode, classify(opcode, "", div))
            append(make(Instruction, (off, opcode, klass, line, lines, written)))  # Instruction(...), a step less
        self._pending, self._lines, self._written, self._last_label = pending, lines, written, last

    def result(self) -> dict[str, FunctionSass]:
        """Mangled function name -> its instructions, of what was read."""
        return {name: FunctionSass(name, tuple(insns)) for name, insns in self._functions.items()}


def sass_command(nvdisasm: str, cubin: str | Path, cc: str) -> list[str]:
    """The SASS with line info of one cubin. No dataflow pass (-ndf) from Volta on: it only labels
    branch-stack jumps, which those GPUs do not have (the same text, a quarter less of nvdisasm's time)."""
    quick = ("-ndf",) if int(cc.split(".")[0]) >= 7 else ()
    return [nvdisasm, "-gi", "-c", *quick, str(cubin)]


def disassemble_one(nvdisasm: str, cubin: str | Path, cc: str, source: str | None,
                    env: Mapping[str, str] | None) -> dict[str, FunctionSass]:
    """One cubin's own nvdisasm call (:func:`sass_command`), parsed (:func:`parse_nvdisasm`); ``env``: the
    toolchain's environment. Raises ToolchainError when nvdisasm cannot run or fails."""
    try:
        done = subprocess.run(sass_command(nvdisasm, cubin, cc), capture_output=True, text=True, timeout=600,
                              env=None if env is None else dict(env), check=False)
    except OSError as exc:
        raise ToolchainError(f"cannot run {nvdisasm}: {exc}") from exc
    if done.returncode != 0:
        raise ToolchainError(f"nvdisasm failed: {done.stderr.strip()[:300]}")
    return parse_nvdisasm(done.stdout, source)
