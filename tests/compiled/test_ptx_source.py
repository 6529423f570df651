"""The PTX index (cudalens.compiled.ptx.PtxSource): functions parsed when asked, each once, with the
same records as parsing the whole text."""

from __future__ import annotations

from cudalens.compiled.ptx import PtxSource, parse_ptx

PTX = """
.version 8.0
.target sm_90
.address_size 64

.extern .func  (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0,
\t.param .b64 vprintf_param_1
)
;
.global .align 4 .b8 table[64];

.func  (.param .b32 func_retval0) _Z3twoi(
\t.param .b32 _Z3twoi_param_0
)
{
\t.reg .b32 \t%r<3>;
\tld.param.u32 \t%r1, [_Z3twoi_param_0];
\tshl.b32 \t%r2, %r1, 1;
\tst.param.b32 \t[func_retval0+0], %r2;
\tret;
}

.visible .entry first(
\t.param .u64 first_param_0
)
{
\t.reg .b32 \t%r<4>;
\t.reg .b64 \t%rd<3>;
\tld.param.u64 \t%rd1, [first_param_0];
\tmov.u32 \t%r1, %tid.x;
\t{ .reg .b64 %tmp;
\tcvt.u64.u32 \t%tmp, %r1;
\tadd.s64 \t%rd2, %rd1, %tmp; }
\tst.global.u32 \t[%rd2], %r1;
\tret;
}

.visible .entry second()
{
\tret;
}
"""


def test_the_index_finds_kernels_device_functions_and_declarations():
    src = PtxSource(PTX)
    assert src.entry_names == ["first", "second"]
    assert [name for name, _e, _s, _t in src.spans] == ["_Z3twoi", "first", "second"]  # vprintf has no body
    assert [d.name for d in src.globals] == ["table"] and src.target == "sm_90"


def test_a_module_of_some_kernels_holds_the_device_functions_and_the_same_records():
    whole = parse_ptx(PTX)
    src = PtxSource(PTX)
    part = src.module(["second"])
    assert [f.name for f in part.functions] == ["_Z3twoi", "second"]
    assert part.function("second") == whole.function("second")
    first = src.module(["first"]).function("first")
    assert first == whole.function("first") and [i.opcode for i in first.instructions] == [
        "ld.param.u64", "mov.u32", "cvt.u64.u32", "add.s64", "st.global.u32", "ret"]
    assert src.module(["first"]).function("first") is first  # parsed once
    assert parse_ptx(PTX, lambda name: name == "second").functions == part.functions


def test_a_file_path_holding_a_double_slash_is_kept():
    # nvcc from the wheels names its headers "<root>/bin/..//include/...": the "//" is no comment
    text = ('.version 8.0\n.target sm_90\n.address_size 64\n'
            '\t.file\t1 "/src/k.cu"\n'
            '\t.file\t2 "/venv/nvidia/cu13/bin/..//include/sm_32_intrinsics.hpp"\n'
            '\t.file\t3 "/src/h.cuh" // a real comment\n')
    files = parse_ptx(text).files
    assert files == {1: "/src/k.cu", 2: "/venv/nvidia/cu13/bin/..//include/sm_32_intrinsics.hpp", 3: "/src/h.cuh"}


def test_a_parsed_instruction_is_the_record_its_constructor_makes():
    """The parser sets an instruction's fields at once (compiled/ptx._parse_function, _instruction), beside the frozen
    constructor: the two must make the same record (a field added to Instruction and not to the parser
    fails here)."""
    from dataclasses import fields

    from cudalens.compiled.ptx import Instruction

    module = parse_ptx(PTX)
    checked = 0
    for fn in module.functions:
        for ins in fn.instructions:
            made = Instruction(ins.index, ins.opcode, ins.operands, ins.pred, ins.loc)
            assert ins == made and hash(ins) == hash(made) and repr(ins) == repr(made)
            assert ins.__dict__ == made.__dict__ and list(ins.__dict__) == list(made.__dict__)
            assert set(ins.__dict__) == {f.name for f in fields(Instruction)}
            checked += 1
    assert checked > 5


BRANCHY = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry loops(
\t.param .u32 loops_param_0
)
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<6>;
\tld.param.u32 \t%r1, [loops_param_0];
\tmov.u32 \t%r2, %tid.x;
\tsetp.ge.s32 \t%p1, %r2, %r1;
\t@%p1 bra \t$L__BB0_3;
$L__BB0_1:
\tadd.s32 \t%r2, %r2, 32;
\tsetp.lt.s32 \t%p2, %r2, %r1;
\t@%p2 bra \t$L__BB0_1;
\tmov.u32 \t%r3, 0;
$L__BB0_3:
\t@%p1 exit;
\tadd.s32 \t%r4, %r2, 1;
\tret;
}
"""


def test_basic_blocks_start_at_labels_and_after_branches_and_exits():
    """Function.blocks (worked out once per function) against the rule written out: a block starts at
    instruction 0, at a label, and after a branch or exit, and runs to the next start."""
    for text in (PTX, BRANCHY):
        for fn in parse_ptx(text).functions:
            n = len(fn.instructions)
            starts = sorted({0, *(i for i in fn.labels.values() if i < n),
                             *(ins.index + 1 for ins in fn.instructions if ins.base in ("bra", "ret", "exit", "brx"))}
                            - {n})
            plain = [(s, starts[k + 1] if k + 1 < len(starts) else n) for k, s in enumerate(starts) if s < n]
            assert list(fn.blocks) == plain and fn.blocks is fn.blocks
    assert parse_ptx(BRANCHY).function("loops").blocks == ((0, 4), (4, 7), (7, 8), (8, 9), (9, 11))
