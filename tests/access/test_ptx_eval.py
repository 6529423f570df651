"""The compiled (PTX) warp access model on kernels of our own, one per feature the source model
could not see (tests/access/ptx/features.cu). Expected figures are worked out by hand from the
address patterns (per warp request, 4-byte floats unless said):

- coalesced 4-byte access: 32 lanes x 4 B = 128 B = 4 sectors; 16-byte (float4): 512 B = 16 sectors
- stride 2 floats: 256 B span -> 8 sectors; stride >= 8 floats: one sector per lane -> 32
- shared: stride 2 words -> 2 lanes per bank -> 2 wavefronts; a column of a 32x32 tile -> 32
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _sources import entry, line_of
from cudalens.access.ptx_eval import BRANCH_QUANTITY, PLAUSIBLE, evaluate
from cudalens.compiled.ptx import parse_ptx, user_location

FEATURES = Path(__file__).parent / "ptx" / "features.cu"


@pytest.fixture(scope="module")
def module(ptx_of):
    return ptx_of(FEATURES)



def _by_line(ev):
    return {(p.line, p.quantity): p for p in ev.predictions}


def _line(text: str) -> int:
    return line_of(FEATURES, text)


def test_templated_kernel_evaluated_as_instantiated(module):
    line = _line("out[i] = in[i * S];")
    two = _by_line(evaluate(module, entry(module, "tmpl_strideILi2E"), (256, 1, 1), (4, 1, 1)))
    wide = _by_line(evaluate(module, entry(module, "tmpl_strideILi32E"), (256, 1, 1), (4, 1, 1)))
    assert two[(line, "global load sectors/request")].value == 8.0
    assert wide[(line, "global load sectors/request")].value == 32.0
    assert two[(line, "global store sectors/request")].value == 4.0
    assert two[(line, "global load sectors/request")].layer == "compiled-ptx"
    # neighbouring lanes S floats apart on the load, one float on the store
    assert two[(line, "global load sectors/request")].lane_stride == 8
    assert wide[(line, "global load sectors/request")].lane_stride == 128
    assert two[(line, "global store sectors/request")].lane_stride == 4


def test_helper_access_lands_on_the_helper_line_and_the_caller(module):
    ev = evaluate(module, entry(module, "helper_caller"), (256, 1, 1), (4, 1, 1), {2: 256})
    p = _by_line(ev)[(_line("return p[i];"), "global load sectors/request")]
    assert p.instructions == 2 and p.value == (4 + 32) / 2  # the two inlined calls, both on the helper's line
    assert p.iteration_invariant is False  # the two calls differ
    fn = entry(module, "helper_caller")
    ld = [i for i in fn.instructions if i.base == "ld" and "global" in i.parts]
    assert {user_location(i.loc, module.files)[1] for i in ld} == {_line("return p[i];")}
    assert all((1, _line("load_at(in, i) + load_at")) in [(f, ln) for f, ln in i.loc.inlined_at] for i in ld)


def test_float4_loads_at_their_compiled_width(module):
    ev = _by_line(evaluate(module, entry(module, "vec4_copy"), (256, 1, 1), (4, 1, 1)))
    p = ev[(_line("out[i] = in[i];  // 16"), "global load sectors/request")]
    assert (p.value, p.width, p.lane_stride) == (16.0, 16, 16)
    assert ev[(_line("out[i] = in[i];  // 16"), "global store sectors/request")].value == 16.0


def test_pointer_increment_loop_is_iteration_invariant(module):
    ev = evaluate(module, entry(module, "ptr_increment"), (256, 1, 1), (2, 1, 1), {2: 64})
    p = _by_line(ev)[(_line("acc += A[0];"), "global load sectors/request")]
    assert p.value == 4.0 and p.iteration_invariant is True
    assert p.requests == 2 * 8 * (64 // 8)  # 2 blocks x 8 warps x 8 iterations: every iteration ran
    unknown_k = _by_line(evaluate(module, entry(module, "ptr_increment"), (256, 1, 1), (2, 1, 1)))
    q = unknown_k[(_line("acc += A[0];"), "global load sectors/request")]
    assert q.value == 4.0 and str(PLAUSIBLE[0]) in q.condition  # same for every plausible K


def test_extern_shared_buffer(module):
    ev = _by_line(evaluate(module, entry(module, "extern_shared"), (256, 1, 1), (2, 1, 1)))
    assert ev[(_line("buf[(2 * t) % blockDim.x]"), "shared load wavefronts/request")].value == 2.0
    assert ev[(_line("buf[t] = in["), "shared store wavefronts/request")].value == 1.0


def test_cooperative_groups_thread_rank(module):
    ev = _by_line(evaluate(module, entry(module, "cg_rank"), (32, 8, 1), (2, 1, 1), {2: 256}))
    line = _line("in[r * ld]")
    assert ev[(line, "global load sectors/request")].value == 32.0
    assert ev[(line, "global store sectors/request")].value == 4.0


def test_warp_uniform_loaded_index(module):
    ev = _by_line(evaluate(module, entry(module, "uniform_index"), (256, 1, 1), (4, 1, 1), {3: 256}))
    line = _line("table[idx * C + c]")
    assert ev[(line, "global load sectors/request")].value == 4.0
    assert ev[(_line("int idx = rows[blockIdx.x];"), "global load sectors/request")].value == 1.0


def test_divergent_branch_and_idle_lanes(module):
    ev = _by_line(evaluate(module, entry(module, "divergent"), (256, 1, 1), (2, 1, 1), {1: 4}))
    p = ev[(_line("v += out[k * blockDim.x + t]"), "global load sectors/request")]
    assert p.value == 2.0 and p.threads_per_request == 16.0  # half the lanes: 64 B
    br = ev[(_line("if (t % 32 < 16)"), BRANCH_QUANTITY)]
    assert br.value == 1.0  # every warp splits at the branch the compiler kept (a loop inside)


def test_transpose_tile_column_read(module):
    ev = _by_line(evaluate(module, entry(module, "transpose_naive_tile"), (32, 32, 1), (2, 2, 1), {2: 64},
                           blocks=((0, 0, 0), (1, 1, 0))))
    assert ev[(_line("tile[threadIdx.x][threadIdx.y];"), "shared load wavefronts/request")].value == 32.0
    assert ev[(_line("tile[threadIdx.y][threadIdx.x] = in"), "shared store wavefronts/request")].value == 1.0


PTX = """
.version 9.0
.target sm_90
.address_size 64
.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
.maxntid 128, 1, 1
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<5>;
	.loc	1 3 0
	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r1, [k_param_1];
	mov.u32 	%r2, %tid.x;
	setp.ge.s32 	%p1, %r2, %r1;
	@%p1 bra 	$L__BB0_2;
	.loc	1 4 5
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.s32 	%rd3, %r2, 8;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r3, [%rd4];
$L__BB0_2:
	.loc	1 5 1
	ret;
}
	.file	1 "/src/k.cu"
"""


def test_parse_and_evaluate_handwritten_ptx():
    mod = parse_ptx(PTX)
    (fn,) = mod.entries
    assert fn.maxntid == (128, 1, 1) and [p.size for p in fn.params] == [8, 4]
    assert fn.labels == {"$L__BB0_2": 9} and mod.files == {1: "/src/k.cu"}
    ev = evaluate(mod, fn, (128, 1, 1), (1, 1, 1), {1: 48}, blocks=((0, 0, 0),))
    (p,) = [q for q in ev.predictions if q.quantity.startswith("global")]
    (br,) = [q for q in ev.predictions if q.quantity == BRANCH_QUANTITY]
    assert (br.line, br.requests, br.value) == (3, 4, 0.25)  # warp 1 splits at t < 48
    # stride 2 words (8 B apart, 4-byte loads): warp 0 spans 256 B = 8 sectors, warp 1 has 16 lanes
    # (t < 48) over 128 B = 4 sectors; warps 2-3 branch away
    assert (p.file, p.line, p.requests, p.value) == ("/src/k.cu", 4, 2, 6.0)
