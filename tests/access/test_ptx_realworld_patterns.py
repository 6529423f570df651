"""The compiled access model on kernels of our own that reproduce patterns of public code
(tests/access/ptx/realworld_patterns.cu), with the figures worked out by hand:

- 16-byte shared loads at ``tile[lane % 4]``: each 16-byte chunk is read by lanes 4 apart; lanes
  share a read only within groups of 4 consecutive lanes, so each group of 4 lanes needs its 4
  chunks (64 B): per half-warp 4 groups x 64 B = 256 B = 2 wavefronts, 4 for the warp (the H100's
  per-instruction counters gave N-way 4 for this pattern in siboehm/SGEMM_CUDA's warptiling kernel);
- 8-byte shared stores at ``xs[tid.x]`` with a block of 8 x 8 x 4: 8 distinct addresses per group
  of 8 lanes, each group of 4 lanes 32 B, 8 groups = 256 B = 2 wavefronts (cuda-samples' Jacobi: 2);
- one shared load run at stride 1 (1 wavefront) and stride 2 (2): 1.5 wavefronts per request, and
  Nsight Compute's N-way, the whole part per instruction, 1;
- a stride loaded from memory, the same for all lanes: with zero-filled memory every lane reads one
  word (1 sector); with the synthetic trial values the stride is 8 floats or more (32 sectors):
  the range 1..32;
- a loop cut early under a small step budget still reaches the store after it (4 sectors);
- a store behind a per-lane loaded flag that the trial values never satisfy: null, naming the load.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _sources import entry, line_of
from cudalens.access import memory as M
from cudalens.access.ptx_eval import evaluate

PATTERNS = Path(__file__).parent / "ptx" / "realworld_patterns.cu"


@pytest.fixture(scope="module")
def module(ptx_of):
    return ptx_of(PATTERNS)



def _line(text: str) -> int:
    return line_of(PATTERNS, text)


def _at(ev, text: str, quantity: str):
    line = _line(text)
    return next(p for p in ev.predictions if p.line == line and p.quantity == quantity)


def test_lane_group_rule_on_the_measured_patterns():
    t = np.arange(32)
    one = np.ones((1, 32), dtype=bool)
    assert int(M.shared_wavefronts((16 * (t % 4))[None], one, 16)[1][0]) == 4  # SGEMM warptiling, measured 4
    assert int(M.shared_wavefronts((16 * (t // 4) * 2)[None], one, 16)[1][0]) == 2  # its A tile, measured 2
    assert int(M.shared_wavefronts((8 * (t % 8))[None], one, 8)[1][0]) == 2  # Jacobi, measured 2
    assert int(M.shared_wavefronts((16 * (t // 8))[None], one, 16)[1][0]) == 2  # probe: quarters, measured 2
    assert int(M.shared_wavefronts((8 * (t // 16))[None], one, 8)[1][0]) == 1  # probe: 8-byte halves, measured 1


def test_wide_shared_loads_by_lane_groups(module):
    ev = evaluate(module, entry(module, "wide_lane_mod4"), (64, 1, 1), (2, 1, 1))
    p = _at(ev, "// lane % 4", "shared load wavefronts/request")
    assert (p.value, p.width, p.nway) == (4.0, 16, 4.0)
    ev8 = evaluate(module, entry(module, "wide_tid_mod8"), (8, 8, 4), (1, 1, 1))
    q = _at(ev8, "// tid.x % 8 per lane", "shared store wavefronts/request")
    assert (q.value, q.width) == (2.0, 8)


def test_nway_is_the_whole_part_per_instruction(module):
    ev = evaluate(module, entry(module, "mixed_stride"), (256, 1, 1), (1, 1, 1), {1: 2})
    p = _at(ev, "// mixed", "shared load wavefronts/request")
    assert p.value == 1.5 and p.nway == 1.0 and p.iteration_invariant is False


def test_warp_uniform_loaded_stride_gives_a_range(module):
    ev = evaluate(module, entry(module, "loaded_stride"), (256, 1, 1), (2, 1, 1))
    p = _at(ev, "// loaded stride", "global load sectors/request")
    assert p.value is None and (p.low, p.high) == (1.0, 32.0)
    assert "zero: 1.0" in p.condition and "warp-uniform value loaded at line" in p.reason
    assert f"line {_line('int s = strides[0];')}" in p.reason


def test_a_loop_cut_under_the_step_budget_still_reaches_what_follows(module):
    ev = evaluate(module, entry(module, "long_loop_then_store"), (256, 1, 1), (2, 1, 1), {2: 1000}, loop_cap=16,
                  max_steps=120)
    assert ev.complete
    assert _at(ev, "// after the loop", "global store sectors/request").value == 4.0
    assert _at(ev, "// loop body", "global load sectors/request").value == 4.0
    assert ev.loops[0]["cut"] is True


def test_unreached_line_names_the_data_that_gates_it(module):
    ev = evaluate(module, entry(module, "gated_by_loaded_flag"), (256, 1, 1), (2, 1, 1))
    p = _at(ev, "// gated store", "global store sectors/request")
    assert p.value is None
    assert p.reason.startswith("data-dependent: not reached") and "per-lane value loaded at line" in p.reason


def test_the_code_after_a_loaded_branch_is_not_under_it(module):
    ev = evaluate(module, entry(module, "after_a_loaded_branch"), (256, 1, 1), (2, 1, 1), {3: 4})
    inside = _at(ev, "// inside the branch", "global load sectors/request")
    assert inside.value is None and inside.reason.startswith("data-dependent: runs under a branch")
    after = _at(ev, "// after the branch", "global store sectors/request")
    assert after.value == 4.0 and after.reason == ""


def test_bit_scans_follow_the_ptx_definitions():
    from cudalens.access.ptx_alu import _bfind, _brev, _clz, _popc

    x = np.array([0, 1, 2, 255, 256, -1, -2], dtype=np.int64)
    none = 0xFFFFFFFF
    assert _bfind(x, "u32", False).tolist() == [none, 0, 1, 7, 8, 31, 31]
    assert _bfind(x, "s32", False).tolist() == [none, 0, 1, 7, 8, none, 0]  # -1: no non-sign bit
    assert _bfind(x, "u32", True).tolist() == [none, 31, 30, 24, 23, 0, 0]
    assert _clz(x, 32).tolist() == [32, 31, 30, 24, 23, 0, 0]
    assert _popc(x).tolist() == [0, 1, 1, 8, 1, 64, 63]
    rev = _brev(np.array([0, 1, 2, 0x12345678], dtype=np.int64), 32)
    assert rev.tolist() == [0, 0x80000000, 0x40000000, 0x1E6A2C48]


def test_64_bit_scans_follow_the_ptx_definitions():
    from cudalens.access.ptx_alu import _bfind, _clz

    x = np.array([0, 1, 2**32, 2**40 + 5, 2**63 - 1, -1, -(2**63)], dtype=np.int64)
    assert _clz(x, 64).tolist() == [64, 63, 31, 23, 1, 0, 0]  # the pattern as unsigned: -1 has bit 63 set
    none = 0xFFFFFFFF
    assert _bfind(x, "s64", False).tolist() == [none, 0, 32, 40, 62, none, 62]  # ~(-2**63) = 2**63 - 1
    assert _bfind(x, "u64", True).tolist() == [none, 63, 31, 23, 1, 63, 0]


def test_reading_a_register_at_another_width_converts_as_ptx_does():
    from cudalens.access.ptx_exec import Val, _as, _same_as

    u32 = np.array([0, 1, 2**31 - 1, 2**31, 2**32 - 1], dtype=np.int64)
    assert _as(u32, "s32").tolist() == [0, 1, 2**31 - 1, -(2**31), -1]
    assert _as(np.array([-1, 2**40 + 3], dtype=np.int64), "s16").tolist() == [-1, 3]
    # a value stored as u16 reads unchanged as s32, u32 and 64-bit; one stored as u32 not as s32
    assert _same_as("u16", "s32") and _same_as("u16", "u32") and _same_as("u32", "s64")
    assert not _same_as("u32", "s32") and not _same_as("i", "u32") and not _same_as("f", "s32")
    assert Val(u32).form == ""  # nothing is assumed of values made elsewhere


def test_scoped_register_blocks_keep_their_statements(module):
    # `{ .reg .b64 %tmp; ... cvta.shared.u64 %rd, %tmp; }` then a store on the next line: the store
    # used to be swallowed into the cvta's operands, so the line had no prediction at all
    fn = entry(module, "shared_pointer_published")
    assert not any(i.opcode.startswith("{") or ";" in " ".join(i.operands) for i in fn.instructions)
    ev = evaluate(module, fn, (256, 1, 1), (1, 1, 1))
    p = _at(ev, "// publish", "shared store wavefronts/request")
    assert (p.value, p.requests, p.width) == (1.0, 1, 8)  # lane 0 of warp 0 stores 8 bytes


def test_match_any_groups_lanes_by_value(module):
    ev = evaluate(module, entry(module, "match_groups"), (64, 1, 1), (2, 1, 1))
    p = _at(ev, "// leader store", "global store sectors/request")
    assert (p.value, p.threads_per_request) == (4.0, 4.0) and not any("match" in n for n in ev.notes)


def test_redux_sum_over_the_warp(module):
    ev = evaluate(module, entry(module, "redux_stride"), (64, 1, 1), (2, 1, 1))
    assert _at(ev, "// strided by the reduction", "global store sectors/request").value == 32.0


def test_a_virtual_calls_callee_names_the_loaded_target(module):
    ev = evaluate(module, entry(module, "virtual_call"), (64, 1, 1), (1, 1, 1))
    p = _at(ev, "// virtual body", "global load sectors/request")
    assert p.value is None and p.reason.startswith("data-dependent: in a function the kernel reaches through a pointer")
    assert f"loaded at line {_line('out[threadIdx.x] = shape->area(v, threadIdx.x);')}" in p.reason


def test_a_helpers_figures_are_bounded_per_call_site(module):
    ev = evaluate(module, entry(module, "helper_two_strides"), (256, 1, 1), (1, 1, 1))
    p = _at(ev, "// helper loads", "shared load wavefronts/request")
    assert p.value == 1.5 and p.call_sites == ((str(PATTERNS), _line("// helper call")),)
    assert p.site_bounds == ((str(PATTERNS), _line("// helper call"), 1.0, 2.0, 1.0, 2.0, None, None),)  # (shared: no ratio)


def test_a_broadcast_needs_one_sector_ideally(module):
    ev = evaluate(module, entry(module, "broadcast_bias"), (64, 1, 1), (2, 2, 1))
    p = _at(ev, "// broadcast", "global load sectors/request")
    assert (p.value, p.ideal) == (1.0, 1.0)
