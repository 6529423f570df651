"""Accesses through pointers: ``p[i]`` and ``*(p + i)`` where ``p`` is a kernel parameter or a local
pointer derived from one, modelled as accesses to the parameter's array at the summed index.

Expected sector counts are computed here from the byte addresses of the 32 lanes of warp 0 in
block 0 and block 1 (the model's representative blocks), averaged.
"""

from __future__ import annotations

import pytest

from cudalens.access.model import analyze_model
from cudalens.source.parse import parse_source

N = 256  # the row length the launch passes

SRC = """
__global__ void k(float *a, const float *b, int n) {
  float *row = a + blockIdx.x * n;
  const float *brow = &b[blockIdx.x * n];
  row[threadIdx.x] = brow[threadIdx.x * 2];
  *(row + threadIdx.x + 1) = *(b + threadIdx.x * 4);
  *row = *(brow + 8 + threadIdx.x);
  (*(a + threadIdx.x))++;
}
int main() { k<<<4, 32>>>(0, 0, 256); }
"""


def sectors(index_of_lane, width=4):
    """Mean over blocks 0 and 1 of the distinct 32-byte sectors lanes 0..31 touch."""
    per_block = []
    for block in (0, 1):
        addrs = [index_of_lane(block, lane) * width for lane in range(32)]
        per_block.append(len({x // 32 for a in addrs for x in (a, a + width - 1)}))
    return sum(per_block) / 2


@pytest.fixture(scope="module")
def accesses():
    (k,) = analyze_model(parse_source(SRC, "p.cu")).kernels
    return {(a.line, a.array, a.op): a for a in k.accesses}


def test_subscript_of_a_derived_pointer(accesses):
    st = accesses[(5, "a", "store")]
    assert st.index == "threadIdx.x" and st.lane_stride == 1
    assert st.sectors_per_request == sectors(lambda b, lane: b * N + lane) == 4
    ld = accesses[(5, "b", "load")]
    assert ld.lane_stride == 2 and ld.sectors_per_request == sectors(lambda b, lane: b * N + 2 * lane) == 8


def test_dereference_of_parameter_and_derived_pointer(accesses):
    st = accesses[(6, "a", "store")]  # row + threadIdx.x + 1: one float off the sector boundary
    assert st.index == "threadIdx.x + 1"
    assert st.sectors_per_request == sectors(lambda b, lane: b * N + lane + 1) == 5
    assert st.pattern == "misaligned"
    ld = accesses[(6, "b", "load")]
    assert ld.index == "threadIdx.x * 4" and ld.lane_stride == 4
    assert ld.sectors_per_request == sectors(lambda b, lane: 4 * lane) == 16


def test_bare_dereference_and_offsets(accesses):
    st = accesses[(7, "a", "store")]  # *row: every lane writes the row's first element
    assert st.index == "0" and st.pattern == "broadcast" and st.sectors_per_request == 1
    ld = accesses[(7, "b", "load")]  # brow + 8 + threadIdx.x: 8 floats = one sector in, aligned
    assert ld.index == "8 + threadIdx.x"
    assert ld.sectors_per_request == sectors(lambda b, lane: b * N + 8 + lane) == 4


def test_increment_through_a_dereference_loads_and_stores(accesses):
    assert {op for (line, arr, op) in accesses if line == 8 and arr == "a"} == {"load", "store"}


def test_what_is_not_modelled():
    (k,) = parse_source("""
__global__ void k(float *a, float4 *v, int **pp) {
  __shared__ float t[8][8];
  float4 x = *(float4 *)(a + 4 * threadIdx.x);  // a cast changes the element size
  float r = *(t[0] + threadIdx.x);              // a row of a 2-D array
  int y = **pp;                                  // the inner *pp reads pp[0]; the outer one is not followed
  float z = *(a + threadIdx.x);
}""").kernels
    assert [(a.array, a.index) for a in k.accesses if a.array != "t"] == [("pp", "0"), ("a", "threadIdx.x")]
