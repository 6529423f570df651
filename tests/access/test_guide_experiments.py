"""The guide's access experiments, with expectations computed from first principles in the test."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cudalens.access.model import analyze_model
from cudalens.source.parse import parse_file

EX = Path(__file__).resolve().parents[2] / "examples" / "access"


def kernels(name, **kw):
    m = analyze_model(parse_file(EX / name), **kw)
    return {k.name: k for k in m.kernels}


def acc(kernel, array, op, space=None, line=None):
    out = [a for a in kernel.accesses if a.array == array and a.op == op and (space is None or a.space == space)
           and (line is None or a.line == line)]
    assert out, f"no {op} of {array}"
    return out


def sectors_from_addresses(addresses, width=4):
    return len({addr // 32 for a in addresses for addr in (a, a + width - 1)})


@pytest.mark.parametrize("offset", range(0, 33))
def test_offset_copy_sectors(offset):
    k = kernels("offset_copy.cu", defines={"offset": offset})["offset_copy"]
    expected = 4 if (4 * offset) % 32 == 0 else 5
    for op, array in (("load", "src"), ("store", "dst")):
        (a,) = acc(k, array, op)
        assert a.sectors_per_request == expected
        assert a.ideal_sectors_per_request == 4
        assert a.pattern == ("coalesced" if expected == 4 else "misaligned")


@pytest.mark.parametrize("stride", range(1, 33))
def test_stride_copy_sectors(stride):
    k = kernels("stride_copy.cu", defines={"stride": stride})["stride_copy"]
    (a,) = acc(k, "src", "load")
    # lanes l = 0..31 read the 4-byte word at 4 * stride * l (warps start 128*stride bytes apart)
    expected = sectors_from_addresses([4 * stride * lane for lane in range(32)])
    assert expected == min(32, 4 * stride)
    assert a.sectors_per_request == expected
    assert a.pattern == ("coalesced" if stride == 1 else f"strided-{stride}")


def test_matmul_variants():
    ks = kernels("matmul.cu")
    naive = ks["ab_naive"]
    (ar,) = acc(naive, "a", "load")
    (br,) = acc(naive, "b", "load")
    assert ar.pattern == "broadcast" and ar.sectors_per_request == 1  # a whole warp shares one row element
    assert br.sectors_per_request == 4 and br.pattern == "coalesced"
    # 32 x 32 block: each a element is read by the 32 threads of a row, each b element by 32 rows
    assert ar.reuse["threads_per_element"] == 32 and br.reuse["threads_per_element"] == 32
    tile_a = ks["ab_tile_a"]
    (al,) = acc(tile_a, "a", "load")
    assert not al.loop_context  # A is read once, outside the loop
    tile_ab = ks["ab_tile_ab"]
    assert all(not a.loop_context for a in tile_ab.accesses if a.space == "global" and a.op == "load")
    for a in tile_ab.accesses:
        if a.space == "shared":
            assert a.bank_conflict_ways == 1


def bank_ways(width_words, lanes):
    """Ways for lane l reading word (l * width_words + r) of a row-major tile: max lanes per bank."""
    banks = {}
    for lane in lanes:
        w = lane * width_words
        banks.setdefault(w % 32, set()).add(w)
    return max(len(v) for v in banks.values())


@pytest.mark.parametrize("kernel,pad", [("transpose_tile", 0), ("transpose_tile_padded", 1)])
def test_transpose_bank_conflicts(kernel, pad):
    k = kernels("transpose.cu")[kernel]
    (read,) = acc(k, "t", "load", "shared")
    (write,) = acc(k, "t", "store", "shared")
    assert write.bank_conflict_ways == 1
    assert read.bank_conflict_ways == bank_ways(32 + pad, range(32))
    assert read.bank_conflict_ways == (32 if pad == 0 else 1)


def test_aat_variants():
    ks = kernels("aat.cu")
    naive_loads = acc(ks["aat_naive"], "a", "load")
    strided = [a for a in naive_loads if a.pattern.startswith("strided")]
    (s,) = strided
    # lanes read a[col*T + q]: 32 floats apart -> one sector each
    assert s.sectors_per_request == sectors_from_addresses([4 * 32 * lane for lane in range(32)]) == 32
    (store,) = acc(ks["aat_tiled"], "cols", "store")
    assert store.bank_conflict_ways == bank_ways(32, range(32))
    (store_p,) = acc(ks["aat_tiled_padded"], "cols", "store")
    assert store_p.bank_conflict_ways == bank_ways(33, range(32)) == 1
    for name in ("aat_tiled", "aat_tiled_padded"):
        for a in acc(ks[name], "a", "load"):
            assert a.sectors_per_request == a.ideal_sectors_per_request == 4


def test_divergence_kernels():
    ks = kernels("divergence.cu")
    (b1,) = ks["split_by_thread"].branches
    (b2,) = ks["split_by_warp"].branches
    assert b1.divergent is True and b1.divergent_warps == b1.warps
    assert b2.divergent is False


def test_constant_distinct_addresses():
    ks = kernels("constant.cu")
    (u,) = acc(ks["uniform_weight"], "weights", "load")
    (p,) = acc(ks["per_lane_weight"], "weights", "load")
    assert u.distinct_addresses == 1
    assert p.distinct_addresses == len({lane % 16 for lane in range(32)})


def test_wide_shared_accesses_split_into_phases():
    ks = kernels("wide.cu")
    (ld,) = acc(ks["shared_double"], "d", "load")
    # 8-byte loads: two half-warps; lane l reads words 4l and 4l+1 (index 2l of doubles)
    half = [(4 * lane) % 32 for lane in range(16)]
    ways = max(half.count(b) for b in set(half))
    assert ld.bank_conflict_ways == ways == 2
    assert ld.wavefronts_per_request == 2 * ways and ld.ideal_wavefronts_per_request == 2
    (v,) = acc(ks["shared_float4"], "v", "load")
    assert v.bank_conflict_ways == 1 and v.wavefronts_per_request == 4


def test_unknown_parameter_is_tried_not_guessed():
    k = kernels("offset_copy.cu")["offset_copy"]  # no --define offset: tried at two values, said so
    (a,) = acc(k, "src", "load")
    assert any("offset" in s for s in a.assumptions)
    k2 = kernels("stride_copy.cu")["stride_copy"]  # the stride changes the verdict: no figures
    (b,) = acc(k2, "src", "load")
    assert b.pattern == "parameter-dependent" and b.sectors_per_request is None


def test_data_dependent_index_has_null_figures():
    from cudalens.source.parse import parse_source

    m = analyze_model(parse_source(
        "__global__ void g(float *o, const int *idx, const float *v) {"
        " int t = threadIdx.x; o[t] = v[idx[t]]; }"))
    (a,) = [x for x in m.kernels[0].accesses if x.array == "v"]
    assert a.pattern == "data-dependent" and a.sectors_per_request is None
    assert math.isclose([x for x in m.kernels[0].accesses if x.array == "idx"][0].sectors_per_request, 4)
