"""Decoded steps (cudalens.access.ptx_decode) do what the general arithmetic (ptx_alu.alu) does: per
specialised instruction, on registers holding values of every form (and none), with every lane or
some, the same registers written with the same values and taints; and every form a decoded step
gives its result is a fact about the values (the lanes a later read or store leaves unconverted)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from cudalens.access import ptx_decode
from cudalens.access.ptx_alu import alu
from cudalens.access.ptx_exec import Launch, Machine, Val, _NotModelled
from cudalens.compiled.ptx import parse_ptx

_BODY = """
add.s32 %r9, %r1, %r2;
add.u64 %rd9, %rd1, %rd2;
add.f32 %f9, %f1, %f2;
sub.s32 %r9, %r1, %r2;
mul.lo.s32 %r9, %r1, %r2;
mul.wide.u32 %rd9, %r1, %r2;
mul.wide.s32 %rd9, %r1, %r2;
mul.hi.u32 %r9, %r1, %r2;
min.s32 %r9, %r1, %r2;
max.u32 %r9, %r1, 17;
and.b32 %r9, %r1, 255;
and.b32 %r9, %r1, %r2;
or.b32 %r9, %r1, %r2;
xor.b64 %rd9, %rd1, %rd2;
shl.b32 %r9, %r1, 3;
shl.b64 %rd9, %rd1, 40;
shl.b32 %r9, %r1, %r2;
shl.b64 %rd9, %rd1, %r2;
mul.lo.u64 %rd9, %rd1, %rd2;
add.s64 %rd9, %rd1, %rd2;
or.b64 %rd9, %rd2, %rd1;
and.b64 %rd9, %rd2, %rd1;
min.u64 %rd9, %rd1, %rd2;
max.s64 %rd9, %rd1, %rd2;
shr.s64 %rd9, %rd1, %r2;
mad.lo.s32 %r9, %r1, %r2, %r1;
mad.lo.u32 %r9, %r2, 12, %r2;
mad.wide.u32 %rd9, %r1, %r2, %rd1;
mad.lo.u64 %rd9, %rd1, %rd2, %rd1;
mad.hi.u32 %r9, %r1, %r2, %r1;
fma.rn.f32 %f9, %f1, %f2, %f1;
shr.u32 %r9, %r1, 5;
shr.s32 %r9, %r1, %r2;
shr.u64 %rd9, %rd1, 70;
and.pred %p9, %p1, %p2;
setp.lt.s32 %p9, %r1, %r2;
setp.eq.s32 %p9, %r1, %r2;
setp.ne.u32 %p9|%p8, %r1, 7;
setp.gt.f32 %p9, %f1, %f2;
setp.lt.and.s32 %p9, %r1, %r2, %p1;
mov.u32 %r9, %r1;
mov.u32 %r9, %tid.x;
mov.b32 %r9, %f1;
mov.u64 %rd9, 4294967296;
cvt.u64.u32 %rd9, %r1;
cvt.s64.s32 %rd9, %r1;
cvt.rzi.s32.f32 %r9, %f1;
cvt.u16.u32 %rs9, %r1;
cvta.to.shared.u64 %rd9, %rd1;
cvta.shared.u64 %rd9, %rd1;
selp.b32 %r9, %r1, %r2, %p1;
selp.u64 %rd9, %rd1, 3, %p2;
selp.u64 %rd9, %rd1, %rd2, %p2;
selp.f32 %f9, %f1, %f2, %p1;
"""

_PTX = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(
    .param .u64 k_param_0
)
{
    .reg .pred %p<10>;
    .reg .b16 %rs<10>;
    .reg .b32 %r<10>;
    .reg .f32 %f<10>;
    .reg .b64 %rd<10>;
""" + _BODY + """
    ret;
}
"""

#: per register, the forms to give it, each with a generator of values it holds
_REGS = {
    "%r1": (("", lambda g, n: g.integers(0, 1 << 32, n)), ("u32", lambda g, n: g.integers(0, 1 << 32, n)),
            ("i", lambda g, n: g.integers(-(1 << 40), 1 << 40, n)), ("u5", lambda g, n: g.integers(0, 32, n))),
    "%r2": (("", lambda g, n: g.integers(-40, 40, n)), ("i", lambda g, n: g.integers(-40, 40, n)),
            ("u6", lambda g, n: g.integers(0, 64, n))),
    "%rd1": (("", lambda g, n: g.integers(0, 1 << 49, n)), ("u49", lambda g, n: g.integers(0, 1 << 49, n)),
             ("i", lambda g, n: g.integers(-(1 << 62), 1 << 62, n))),
    "%rd2": (("", lambda g, n: g.integers(-(1 << 62), 1 << 62, n)), ("i", lambda g, n: g.integers(-(1 << 62), 1 << 62, n)),
             ("u20", lambda g, n: g.integers(0, 1 << 20, n))),
    "%f1": (("", lambda g, n: g.normal(0, 1e3, n)), ("f", lambda g, n: g.normal(0, 1e3, n))),
    "%f2": (("f", lambda g, n: g.normal(0, 1e3, n)), ("", lambda g, n: g.normal(0, 1e3, n))),
    "%p1": (("", lambda g, n: g.integers(0, 2, n)), ("u1", lambda g, n: g.integers(0, 2, n))),
    "%p2": (("u1", lambda g, n: g.integers(0, 2, n)), ("i", lambda g, n: g.integers(0, 2, n))),
}


def _holds(form: str, a: np.ndarray) -> bool:
    """Whether lanes ``a`` are what ``form`` says."""
    if form == "f":
        return a.dtype == np.float64
    if form == "i":
        return a.dtype == np.int64
    if form.startswith("u"):
        return a.dtype == np.int64 and bool(((a >= 0) & (a < (1 << int(form[1:])))).all())
    return form == ""


def _general(m: Machine, ins, mask: np.ndarray) -> None:
    try:
        alu(m, ins, mask)
    except (_NotModelled, KeyError, ValueError, IndexError, StopIteration, TypeError, OverflowError):
        ptx_decode._unmodelled(m, ins, mask)


@pytest.mark.parametrize("seed", range(12))
def test_decoded_steps_write_what_the_general_arithmetic_writes(seed):
    module = parse_ptx(_PTX)
    fn = module.entries[0]
    g = np.random.default_rng(seed)
    machine = Machine(module, fn, Launch((2, 1, 1), (96, 1, 1), ((0, 0, 0), (1, 0, 0)), {}))
    n = machine.T
    for name, forms in _REGS.items():
        form, make = forms[(seed + len(name)) % len(forms)]
        a = make(g, n)
        a = a.astype(np.float64) if name.startswith("%f") else a.astype(np.int64)
        machine.regs[name] = Val(a, int(g.integers(0, 3)), f"why {name}", form)
    masks = [machine.valid, machine.valid & (g.random(n) < 0.5)]
    specialised = 0
    for ins in fn.instructions:
        if ins.base == "ret":
            continue
        step, alone = ptx_decode.decode(machine, ins)
        assert step is not None and alone
        specialised += ptx_decode._specialised(ins) is not None
        for mask in masks:
            for ctl in (0, 2):
                ours, theirs = copy.copy(machine), copy.copy(machine)
                for m in (ours, theirs):
                    m.regs, m.unmodelled, m.ctl, m.ctl_taint = dict(machine.regs), {}, (ctl, "a branch"), ctl
                    m._full = (None, False, None)
                step(ours, mask, mask, (0, ""))
                _general(theirs, ins, mask)
                assert ours.unmodelled == theirs.unmodelled, ins.opcode
                assert ours.regs.keys() == theirs.regs.keys(), ins.opcode
                for name, v in ours.regs.items():
                    w = theirs.regs[name]
                    assert v.a.dtype == w.a.dtype and np.array_equal(v.a, w.a, equal_nan=v.a.dtype.kind == "f"), \
                        (ins.opcode, name)
                    assert (v.taint, v.why) == (w.taint, w.why), (ins.opcode, name)
                    assert _holds(v.form, v.a), (ins.opcode, name, v.form)
    assert specialised >= 35  # (the general path for the rest: mul.hi, mad.hi, and.pred, setp with a combining predicate)


def test_a_constant_operand_is_read_as_a_register_once_one_of_its_name_is_written():
    """Inline assembly declares registers without a ``%`` (``.reg .pred p``): a name the reader would
    take for a constant reads the register once it is written."""
    module = parse_ptx(_PTX)
    machine = Machine(module, module.entries[0], Launch((1, 1, 1), (32, 1, 1), ((0, 0, 0),), {}))
    read = ptx_decode.reader("p", "pred")
    assert read(machine).taint == 2  # not a register yet: an operand not modelled
    machine.regs["p"] = Val(np.ones(machine.T, dtype=np.int64), 0, "", "u1")
    assert read(machine).a.tolist() == [1] * machine.T
    five = ptx_decode.reader("5", "u32")
    assert five(machine).a.tolist() == [5] * machine.T and five(machine).form == "u3"
