"""The instructions of the PTX lane machine decoded once (for cudalens.access.ptx_run's scheduler).

An instruction's strings never change, yet a step used to work them out again on every execution:
its opcode family, types, whether each operand is a register, an immediate or a special register
(and the immediate's lanes), the destinations of a vector load, its state space and width, its
merged width, whether the registers it loads are needed. :func:`block_steps` works them out when a
basic block first runs and gives the scheduler, per instruction, its guard's reader and a *step*:
a function of the machine and the lane masks that does what is left, reading and writing registers
and the numpy work. Decoded once per run, a step serves every execution of the instruction (loops,
the variants of a run, a forked run: ptx_run.fork_run); the steps of the arithmetic, which depend on
an instruction's text alone, serve every kernel of one PTX text (template instantiations repeat most
of their instructions: cuda-samples' reduction decodes 3971 instructions for 10240).

Specialised here (most executions): ``add``, ``sub``, ``mul``, ``mad``, ``fma``, ``min``, ``max``,
integer ``and``, ``or``, ``xor``, ``shl``, ``shr``; ``setp`` without a combining predicate; ``mov`` and ``cvt`` of
integer lanes; ``cvta``; ``selp``; loads and stores (cudalens.access.ptx_memory). Every other
instruction (but those not modelled: counted, their destinations tainted), and these where their
lanes are floats, runs cudalens.access.ptx_alu's :func:`alu`
(or ptx_warp's warp-wide functions) as before. A specialised step computes what :func:`alu` does,
in the same order (so the same values and taints, and the same failure where it fails); the
difference is time only. Barriers and hints do nothing: they get no step.

A step holds no machine's mutable state (registers, records); an arithmetic step holds nothing of a
machine (an immediate's lanes are the machine's, Machine.read's), a load or store the run's constants
(its parameters, merged widths and needed registers), which a forked run shares.
"""

from __future__ import annotations

import operator
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from cudalens.access.ptx_alu import _BINARY, _MODULAR, _NARROW, alu
from cudalens.access.ptx_exec import (
    _CMP,
    NOOPS,
    SHARED_BASE,
    UNMODELLED,
    WARP,
    Machine,
    MemRecord,
    Reader,
    Step,
    Val,
    _NotModelled,
    _Specials,
)
from cudalens.access.ptx_forms import _int_bits, _same_as, _types, _union
from cudalens.access.ptx_memory import _record, _space, _width, memory_step
from cudalens.access.ptx_warp import match_redux, shfl, vote
from cudalens.compiled.ptx import Function, Instruction

#: what an instruction the machine does not model raises (then its destinations are tainted)
_ALU_ERRORS = (_NotModelled, KeyError, ValueError, IndexError, StopIteration, TypeError, OverflowError)
#: the forms registers hold (ptx_forms): a register of another form is read the general way
_FORMS = ("", "f", "i", *(f"u{n}" for n in range(1, 64)))
_INT64 = np.dtype(np.int64)


def shared_by_text(files: object) -> tuple[dict, dict, dict]:
    """What the kernels of one PTX text share (``files``: its modules' PtxModule.files, one object for
    them all): the steps of the arithmetic by instruction text (they depend on it alone; template
    instantiations repeat most of theirs), immediates' lanes by lane count (Machine._consts) and special
    registers' by launch (block, grid, blocks evaluated, variants: Machine._specials). One text's at a
    time: another's instructions rarely repeat these."""
    if _SHARED[0] is not files:
        _SHARED[:] = [files, {}, {}, {}]
    return _SHARED[1], _SHARED[2], _SHARED[3]


#: the module files whose steps and constants are kept, then the steps, the immediates, the special registers
_SHARED: list = [None, {}, {}, {}]


def block_steps(m: Machine, fn: Function, s: int, e: int, dead: frozenset[int] | None,
                shared: dict[tuple, tuple[Reader | None, Step | None]]) -> list[tuple[Reader | None, Step]]:
    """The steps of basic block ``[s, e)`` but its closing branch (the scheduler's) and the instructions
    in ``dead``: per instruction its guard predicate's reader (None: none) and its step. ``shared``: the
    steps that depend on an instruction's text alone, by text (:func:`shared_by_text`)."""
    out: list[tuple[Reader | None, Step]] = []
    last = fn.instructions[e - 1]
    for ins in fn.instructions[s:e]:
        if ins is last and ins.base in ("bra", "ret", "exit", "brx"):
            break
        if dead is not None and ins.index in dead:
            continue
        text = (ins.opcode, ins.operands, ins.pred)
        got = shared.get(text)
        if got is None:
            step, alone = decode(m, ins)
            got = (reader(ins.pred, "pred") if ins.pred else None, step)
            if alone:
                shared[text] = got
        if got[1] is not None:
            out.append(got)  # type: ignore[arg-type]
    return out


def decode(m: Machine, ins: Instruction) -> tuple[Step | None, bool]:
    """The step of one instruction (None: it does nothing), and whether it depends on the
    instruction's text alone (not on its position, its line or the machine)."""
    op = ins.base
    if op in ("ld", "ldu", "st"):
        return memory_step(m, ins, reader), False
    if op in NOOPS and not (op == "cp" and "async" in ins.parts and "bulk" not in ins.parts and len(ins.operands) >= 3):
        return None, True
    if op in UNMODELLED:
        return _not_modelled(ins), True
    if op in ("shfl", "vote", "match", "redux", "activemask", "atom", "red", "mbarrier", "cp", "call"):
        return (lambda m, mask, present, ptaint: _other(m, ins, mask, present, ptaint)), False
    try:
        step = _specialised(ins)
    except _ALU_ERRORS:  # (the general step fails the same way when it runs)
        step = None
    return step or (lambda m, mask, present, ptaint: _alu(m, ins, mask)), True


@lru_cache(maxsize=1 << 15)  # (a reader holds nothing of a machine: one per operand and type)
def reader(tok: str, typ: str) -> Reader:
    """An operand's lanes read at ``typ`` (Machine.read): a register's own lanes where its form
    needs no conversion, an immediate's (a special register's, a symbol's) lanes as the machine
    made them when first read."""
    name = tok.strip()
    if name.startswith("!"):
        return lambda m: m.read(name, typ)
    if not name.startswith("%") or name in _Specials.NAMES:  # a constant, unless a register of that name is
        # written (inline assembly's ``.reg .pred p``): where Machine.read keeps it (a number: an immediate,
        # never a symbol's name)
        if name in _Specials.NAMES:
            def special(m: Machine) -> Val:
                v = m._specials.get(name)
                return m.read(name, typ) if v is None or name in m.regs else v
            return special
        key = (name, typ.startswith("f"))
        number = name[:1].isdigit() or name[:1] in "-."

        def constant(m: Machine) -> Val:
            v = (m._consts if number else m._imms).get(key)
            return m.read(name, typ) if v is None or name in m.regs else v
        return constant
    same = _same_forms(typ)

    def register(m: Machine) -> Val:
        v = m.regs.get(name)
        if v is not None and v.form in same:
            return v
        return m.read(name, typ)
    return register


@lru_cache(maxsize=256)
def _same_forms(typ: str) -> frozenset[str]:
    return frozenset(f for f in _FORMS if _same_as(f, typ))


def _alu(m: Machine, ins: Instruction, mask: np.ndarray) -> None:
    try:
        alu(m, ins, mask)
    except _ALU_ERRORS:
        _unmodelled(m, ins, mask)


def _unmodelled(m: Machine, ins: Instruction, mask: np.ndarray) -> None:
    m.unmodelled[ins.opcode] = m.unmodelled.get(ins.opcode, 0) + 1
    _taint_dsts(m, ins, mask, f"{ins.opcode} not modelled")


def _result_form(r: np.ndarray) -> str:
    return "f" if r.dtype.kind == "f" else "i" if r.dtype == _INT64 else ""


def _as_int(x: np.ndarray) -> np.ndarray:
    return x.astype(np.int64, copy=False)


_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "min": np.minimum, "max": np.maximum,
    "and": lambda x, y: _as_int(x) & _as_int(y), "or": lambda x, y: _as_int(x) | _as_int(y),
    "xor": lambda x, y: _as_int(x) ^ _as_int(y),
    "shl": lambda x, y: np.where(_as_int(y) >= 64, 0, _as_int(x) << np.minimum(_as_int(y), 63)),
    "shr": lambda x, y: _as_int(x) >> np.minimum(_as_int(y), 63),
}


@lru_cache(maxsize=4096)
def _bounded(op: str, x: str, y: str | int) -> str:
    """The form of the int64 result of ``op`` whose operands have forms ``x`` and ``y`` (for ``shl``, ``y``
    is the constant shift): "uN" where their ranges bound it to [0, 2**N), else "i". A sum, a product or
    a left shift by a constant grows their bits; ``and`` with one operand in [0, 2**n), a right shift of
    one (x >= 0: the result lies in [0, x]), the least and the greatest keep them."""
    n = int(x[1:]) if x[:1] == "u" else None
    k = y if isinstance(y, int) else int(y[1:]) if y[:1] == "u" else None
    if op == "and":
        bits = n if k is None else k if n is None else min(n, k)
    elif op == "shr":
        bits = n
    elif n is None or k is None:
        bits = None
    else:
        bits = {"add": max(n, k) + 1, "mul": n + k, "shl": n + k, "min": min(n, k)}.get(op, max(n, k))  # (or, xor, max)
    return f"u{bits}" if bits is not None and bits <= 63 else "i"


_BOUNDED = frozenset({"add", "mul", "shl", "and", "shr", "or", "xor", "min", "max"})  # (see _bounded)


def _shift_by(op: str, k: int) -> Callable[[Any, Any], Any]:
    """A shift by the constant ``k``: one operation."""
    if op == "shr":
        return lambda x, y: _as_int(x) >> min(k, 63)
    return (lambda x, y: _as_int(x) << k) if k < 64 else (lambda x, y: np.zeros_like(_as_int(x)))


def _specialised(ins: Instruction) -> Step | None:  # noqa: C901 - one table of families
    """The step of an instruction :func:`alu` would run, for the families specialised here (None: another)."""
    op, ts, o, parts = ins.base, _types(ins), ins.operands, ins.parts
    typ = ts[-1] if ts else "s64"
    if op in _ARITH and op in _BINARY and not ("hi" in parts and op == "mul" and not typ.startswith("f")) \
            and not (typ == "pred" and op in ("and", "or", "xor", "shl", "shr")):
        wide = "wide" in parts
        src_t = typ
        if op in _MODULAR and not wide and typ in _NARROW and "sat" not in parts and "hi" not in parts:
            src_t = "u" + typ[1:]  # the low bits these give do not depend on signedness: no sign extension
        ra, rb = reader(o[1], src_t), reader(o[2], "u32" if op in ("shl", "shr") else src_t)
        f = _shift_by(op, int(o[2])) if op in ("shl", "shr") and o[2].isdigit() else _ARITH[op]
        dst, dst_t = o[0].strip(), ("s64" if typ[0] == "s" else "u64") if wide else typ
        shift = int(o[2]) if op == "shl" and o[2].isdigit() else None
        bound = op in _BOUNDED and (op != "shl" or shift is not None)  # (shl by a register: any amount)

        def binary(m: Machine, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
            try:
                a, b = ra(m), rb(m)
                r = f(a.a, b.a)
                w = b if b.taint > a.taint else a
                form = _result_form(r)
                if bound and form == "i":  # the operands' ranges may bound the result's
                    form = _bounded(op, a.form, b.form if shift is None else shift)
                m.put(dst, Val(r, w.taint, w.why, form), dst_t, mask)
            except _ALU_ERRORS:
                _unmodelled(m, ins, mask)
        return binary
    if op in ("mad", "fma") and not ("hi" in parts and not typ.startswith("f")):
        return _mad(ins, typ)
    if op == "setp":
        return _setp(ins, typ)
    if op in ("mov", "cvt") and not o[0].startswith("{") and not o[1].startswith("{"):
        two = op == "cvt" and len(ts) >= 2
        ra, dst, dst_t = reader(o[1], ts[-1] if two else typ), o[0].strip(), ts[0] if two else typ

        def move(m: Machine, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
            try:
                a = ra(m)
                if a.a.dtype.kind == "f":  # rounding or reinterpreting floats: alu's
                    alu(m, ins, mask)
                else:
                    m.put(dst, Val(a.a, a.taint, a.why, a.form), dst_t, mask)
            except _ALU_ERRORS:
                _unmodelled(m, ins, mask)
        return move
    if op == "cvta":
        return _cvta(ins, typ)
    if op == "selp":
        ra, rb, rc, dst = reader(o[1], typ), reader(o[2], typ), reader(o[3], "pred"), o[0].strip()

        def selp(m: Machine, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
            try:
                a, b, c = ra(m), rb(m), rc(m)
                w = b if b.taint > a.taint else a
                w = c if c.taint > w.taint else w
                r = np.where(c.a != 0, a.a, b.a)
                m.put(dst, Val(r, w.taint, w.why, _union(a.form, b.form) if r.dtype == _INT64 else ""), typ, mask)
            except _ALU_ERRORS:
                _unmodelled(m, ins, mask)
        return selp
    return None


def _mad(ins: Instruction, typ: str) -> Step:
    """``mad`` (but ``.hi``) and ``fma`` (alu's, decoded), the result's form bounded by the operands'."""
    o, parts = ins.operands, ins.parts
    wide = "wide" in parts
    src_t = typ
    if ins.base in _MODULAR and not wide and typ in _NARROW and "sat" not in parts:
        src_t = "u" + typ[1:]  # the low bits do not depend on signedness: no sign extension
    wide_t = "s64" if typ[0] == "s" else "u64"
    ra, rb, rc = reader(o[1], src_t), reader(o[2], src_t), reader(o[3], wide_t if wide else src_t)
    dst, dst_t = o[0].strip(), wide_t if wide else typ

    def mad(m: Machine, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
        try:
            a, b, c = ra(m), rb(m), rc(m)
            r = a.a * b.a + c.a
            w = b if b.taint > a.taint else a
            w = c if c.taint > w.taint else w
            form = _result_form(r)
            if form == "i":
                form = _bounded("add", _bounded("mul", a.form, b.form), c.form)
            m.put(dst, Val(r, w.taint, w.why, form), dst_t, mask)
        except _ALU_ERRORS:
            _unmodelled(m, ins, mask)
    return mad


def _setp(ins: Instruction, typ: str) -> Step | None:
    """``setp`` without a combining predicate (alu's, decoded)."""
    o, parts = ins.operands, ins.parts
    cmp = next((p for p in parts[1:] if p in _CMP), None)
    if cmp is None or (any(p in ("and", "or", "xor") for p in parts) and len(o) > 3):
        return None
    # equality of two registers' n-bit patterns does not depend on signedness: no sign extension
    # (an immediate is read as written, so a signed comparison with one keeps its type)
    both_regs = o[1].startswith("%r") and o[2].startswith("%r")  # nvcc's %r, %rd, %rs registers
    read_t = "u" + typ[1:] if cmp in ("eq", "ne") and typ in _NARROW and both_regs else typ
    ra, rb, f = reader(o[1], read_t), reader(o[2], read_t), _CMP[cmp]
    dsts = o[0].split("|")
    dst, dst2 = dsts[0].strip(), dsts[1].strip() if len(dsts) > 1 else None
    negated = "|" in o[0]

    def setp(m: Machine, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
        try:
            a, b = ra(m), rb(m)
            r = f(a.a, b.a).astype(np.int64)
            w = b if b.taint > a.taint else a
            m.put(dst, Val(r, w.taint, w.why, "u1"), "pred", mask)
            if dst2 is not None:
                m.put(dst2, Val((r == 0).astype(np.int64) if negated else r, w.taint, w.why, "u1"), "pred", mask)
        except _ALU_ERRORS:
            _unmodelled(m, ins, mask)
    return setp


def _cvta(ins: Instruction, typ: str) -> Step:
    """``cvta`` (alu's, decoded): to the shared window (where every active lane's address is in it) or from it."""
    parts = ins.parts
    to_shared, shared = "to" in parts and "shared" in parts, "shared" in parts
    ra = reader(ins.operands[1], typ)
    dst, dst_t = ins.operands[0].strip(), ("u64" if typ == "u64" else "u32") if to_shared else typ

    def cvta(m: Machine, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
        try:
            a = ra(m)
            x = a.a
            r = x - SHARED_BASE if to_shared else x + SHARED_BASE if shared else x
            if to_shared and mask.any() and bool((x[mask] < SHARED_BASE).any()):
                r = x
            m.put(dst, Val(r, a.taint, a.why, a.form if r is x else ""), dst_t, mask)
        except _ALU_ERRORS:
            _unmodelled(m, ins, mask)
    return cvta


def _other(m: Machine, ins: Instruction, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
    """The instructions neither :func:`alu` nor a load or store: warp-wide ones, atomics, calls, ..."""
    op = ins.base
    if op == "shfl":
        shfl(m, ins, mask)
    elif op == "vote":
        vote(m, ins, mask)
    elif op in ("match", "redux"):
        match_redux(m, ins, mask)
    elif op == "activemask":
        act = mask.reshape(-1, WARP)
        m.write(ins.operands[0], Val(np.repeat((act.astype(np.int64) << np.arange(WARP)).sum(axis=1), WARP)), "b32",
                mask)
    elif op in ("atom", "red"):
        space = _space(ins) or "global"
        addr, _ = m.address(ins.operands[1] if op == "atom" else ins.operands[0])
        if space == "shared":  # its wavefronts: the load of the compare-and-swap loop ptxas may make of it reads them
            if (_int_bits(addr.form) or 64) > 32:
                addr = Val(np.where(addr.a >= SHARED_BASE, addr.a - SHARED_BASE, addr.a), addr.taint, addr.why)
            _record(m, ins, "shared", "atomic", addr, mask, present, _width(ins)[1], ptaint)
        for v in np.unique(m.row_variant[mask.reshape(-1, WARP).any(axis=1)]).tolist() if space != "shared" else ():
            m.mem_v[v].setdefault(ins.index, MemRecord(ins.index, f"atomic-{space}", "atomic", _width(ins)[1]))
        if op == "atom":
            _taint_dsts(m, ins, mask, f"atomic result at line {ins.loc.line if ins.loc else 0}")
    elif op == "mbarrier":
        if "try_wait" in ins.parts or "test_wait" in ins.parts:
            m.write(ins.operands[0], Val(np.ones(m.T, dtype=np.int64)), "pred", mask)
    elif op == "cp":  # cp.async: its global read
        src, _ = m.address(ins.operands[1])
        size = int(ins.operands[2]) if ins.operands[2].isdigit() else 16
        _record(m, ins, "global", "load", src, mask, present, size, ptaint)
    elif op == "call":
        m.calls += 1
        target = next((t for t in ins.operands if t.startswith("%")), None)
        if target is not None:  # through a pointer (a virtual call): the target is data
            t = m.read(target, "u64")
            why = t.why or "a value computed per lane"
            if why not in m.indirect:
                m.indirect.append(why)
        _taint_dsts(m, ins, mask, "result of a call the model does not follow")


def _not_modelled(ins: Instruction) -> Step:
    """An instruction the machine does not model (a texture fetch, ...): counted, its destinations tainted."""
    op, dsts, why = ins.base, _dsts(ins), f"{ins.base} not modelled"

    def not_modelled(m: Machine, mask: np.ndarray, present: np.ndarray, ptaint: tuple[int, str]) -> None:
        m.unmodelled[op] = m.unmodelled.get(op, 0) + 1
        if dsts:
            zeros = _tainted_zeros(m, why)
            for d in dsts:
                m.put(d, zeros, "s64", mask)
    return not_modelled


def _dsts(ins: Instruction) -> list[str]:
    """The registers an instruction the machine does not follow writes (their values then depend on
    what it does not model)."""
    if not ins.operands:
        return []
    first = ins.operands[0].strip("()")
    if ins.base == "call":
        first = ins.operands[0].strip("()") if ins.operands[0].startswith("(") else ""
    return [d for d in (d.strip().split("|")[0] for d in first.strip("{}").split(",")) if d.startswith("%")]


def _taint_dsts(m: Machine, ins: Instruction, mask: np.ndarray, why: str) -> None:
    dsts = _dsts(ins)
    if dsts:
        zeros = _tainted_zeros(m, why)
        for d in dsts:
            m.put(d, zeros, "s64", mask)


def _tainted_zeros(m: Machine, why: str) -> Val:
    """Zero lanes that depend on what the model does not follow (taint 2, ``why``): the immediate 0's lanes
    (made once, never changed: registers may share them) with their form, which a write at s64 keeps as they are."""
    zero = _ZERO(m)
    return Val(zero.a, 2, why, zero.form)


_ZERO = reader("0", "s64")
