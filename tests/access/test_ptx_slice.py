"""The lane machine skips instructions whose results reach no address, branch or predicate
(cudalens.access.ptx_slice) and makes no value for a load nobody reads: which ones, and that
neither changes a prediction."""

from __future__ import annotations

from pathlib import Path

import pytest

import cudalens.access.ptx_eval as ptx_eval
import cudalens.access.ptx_run as ptx_run
from cudalens.access.ptx_eval import evaluate
from cudalens.access.ptx_slice import _regs, dead_instructions
from cudalens.compiled.ptx import parse_ptx

PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{
	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r1, [k_param_1];
	mov.u32 	%r2, %tid.x;
	ld.global.f32 	%f1, [%rd1];
	mul.f32 	%f2, %f1, %f1;
	add.f32 	%f3, %f2, 0f3F800000;
	setp.lt.s32 	%p1, %r2, %r1;
	@%p1 bra 	$L__BB0_2;
	mul.wide.u32 	%rd2, %r2, 4;
	add.s64 	%rd3, %rd1, %rd2;
	st.global.f32 	[%rd3], %f3;
$L__BB0_2:
	ret;
}
"""


def test_values_only_stored_are_dead_addresses_and_branches_live():
    fn = parse_ptx(PTX).entries[0]
    dead = {fn.instructions[i].opcode for i in dead_instructions(fn)}
    assert dead == {"mul.f32", "add.f32"}  # %f3 is only stored; the load, setp, address math stay


FEATURES = [Path(__file__).parent / "ptx" / n for n in ("features.cu", "realworld_patterns.cu")]


@pytest.mark.parametrize("path", FEATURES, ids=lambda p: p.stem)
def test_skipping_changes_no_prediction(path, ptx_of, monkeypatch):
    module = ptx_of(path)
    sliced = [evaluate(module, fn, (128, 1, 1), (2, 1, 1)) for fn in module.entries]
    assert any(dead_instructions(fn) for fn in module.entries)  # the slice skips something here
    # skip nothing, and make every loaded value (needed: every register the kernel names)
    every = lambda fn: frozenset(r for ins in fn.instructions for t in (*ins.operands, ins.pred or "") for r in _regs(t))  # noqa: E731
    real = ptx_eval.slice_and_params  # (the parameters that reach addresses: unchanged)
    monkeypatch.setattr(ptx_eval, "slice_and_params", lambda fn: (frozenset(), every(fn), real(fn)[2]))
    monkeypatch.setattr(ptx_run, "slice_of", lambda fn: (frozenset(), every(fn)))
    full = [evaluate(module, fn, (128, 1, 1), (2, 1, 1)) for fn in module.entries]
    for a, b in zip(sliced, full):
        assert a.predictions == b.predictions and a.loops == b.loops and a.complete == b.complete


def test_loads_matter_only_when_a_loaded_value_reaches_an_address_or_branch(ptx_of):
    from cudalens.access.ptx_slice import loads_matter

    assert loads_matter(parse_ptx(PTX).entries[0]) is False  # the loaded float is only stored
    module = ptx_of(FEATURES[1])
    fn = next(f for f in module.entries if "loaded_stride" in f.name)
    assert loads_matter(fn) is True  # the stride read from memory decides the addresses
