"""Access.staging (would a shared-memory tile serve a strided load coalesced?) and rule SH3 on it.

Expected figures are computed here from the addresses, not copied from the model's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.access.model import analyze_model
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import run_rules
from cudalens.source.parse import parse_file, parse_source

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "src" / "cudalens" / "labs" / "kernels" / "matmul.cu"


def sector_count(element_indices, width=4):
    return len({(e * width + b) // 32 for e in element_indices for b in (0, width - 1)})


def global_loads(model, kernel):
    (k,) = [k for k in model.kernels if k.name == kernel]
    return [a for a in k.accesses if a.space == "global" and a.op == "load"]


def sh3(source_model):
    findings, problems = run_rules(RuleContext(source=source_model), only=["SH3"])
    assert problems == []
    return findings


@pytest.fixture(scope="module")
def lab():
    return analyze_model(parse_file(LAB), block=(32, 32, 1))


def test_lab_column_walk_staging_facts(lab):
    (col,) = [a for a in global_loads(lab, "aat_simple") if a.index == "col * TILE_DIM + i"]
    # block 32 x 32: 32 warps (threadIdx.y = warp), lane = threadIdx.x; col = lane in block 0.
    # iteration i: lane l reads element 32 * l + i -> 32 distinct sectors per request.
    per_request = [sector_count([32 * lane + i for lane in range(32)]) for i in range(32)]
    assert per_request == [32] * 32
    requests = 32 * 32  # 32 warps, 32 iterations (the stride, and the whole loop)
    region = [32 * lane + i for lane in range(32) for i in range(32)]  # 32 whole rows of 32 floats
    st = col.staging
    assert st["over"] == "loop" and st["requests"] == requests
    assert st["sectors"] == 32 * sum(per_request)
    assert st["sectors_staged"] == sector_count(region) == 128
    assert st["used"] == len(set(region)) * 4 / (128 * 32) == 1.0


def test_lab_sh3_on_the_unoptimized_variant_only(lab):
    found = sh3(lab)
    assert [(f.kernel, f.line) for f in found] == [("aat_simple", 64)]
    (f,) = found
    # the access is G3's strided load: SH3 takes G3's priority and G3 is not reported for it
    assert f.rule == "SH3" and f.section == "BPG 9.2.3.3" and f.priority.name == "HIGH"
    assert any(e.fact == "supersedes" and e.value == "G3" for e in f.evidence)
    assert f.impact == pytest.approx(1 - 128 / 32768, abs=1e-4)
    g3, problems = run_rules(RuleContext(source=lab), only=["G3"])
    assert problems == [] and ("aat_simple", 64) not in {(g.kernel, g.line) for g in g3}


def test_staged_loads_are_marked_with_their_tile(lab):
    loads = global_loads(lab, "aat_shared")
    assert {(a.stored_to, a.lane_stride) for a in loads} == {("aTile", 1), ("transposedTile", 1)}
    assert all(a.stored_to is None for a in global_loads(lab, "aat_simple"))


def test_staging_through_a_local_is_not_followed():
    m = analyze_model(parse_source("""
__global__ void k(const float *a, float *o) {
  __shared__ float t[256];
  float v = a[threadIdx.x];
  t[threadIdx.x] = v;
  t[threadIdx.x] = 2.0f * a[threadIdx.x];
  o[threadIdx.x] = t[255 - threadIdx.x];
}"""))
    assert [a.stored_to for a in global_loads(m, "k")] == [None, "t"]


def test_2d_block_transpose_read_is_staged_over_the_block():
    m = analyze_model(parse_source("""
__global__ void tr(const float *in, float *out, int n) {
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
  out[y * n + x] = in[x * n + y];
}
int main() { tr<<<dim3(8, 32), dim3(32, 8)>>>(0, 0, 256); }"""))
    (a,) = global_loads(m, "tr")
    # 8 warps (y = 0..7), lane x reads element 256 * x + y: a sector per lane per warp;
    # together lane x reads 8 consecutive floats = one 32-byte sector (256 * 4 bytes per row).
    region = [256 * x + y for x in range(32) for y in range(8)]
    assert a.staging == {"over": "block", "requests": 8, "sectors": 8 * 32, "sectors_staged": sector_count(region),
                         "used": 1.0}
    assert sector_count(region) == 32
    assert [f.line for f in sh3(m)] == [4]  # the source string starts with a newline


def test_sparse_and_small_strides_are_not_sh3():
    m = analyze_model(parse_source("""
__global__ void pick(const float *a, float *o) { o[threadIdx.x] = a[threadIdx.x * 64]; }
__global__ void pairs(const float *a, float *o) { o[threadIdx.x] = a[threadIdx.x * 2] + a[threadIdx.x * 2 + 1]; }
__global__ void short_loop(const float *a, float *o) {
  float s = 0; for (int k = 0; k < 4; k++) s += a[threadIdx.x * 64 + k]; o[threadIdx.x] = s; }
"""))
    # pick: 8 warps x 32 lanes read one float per 256-byte row: 256 sectors, each used for 4 of 32 bytes
    (p,) = global_loads(m, "pick")
    assert p.staging["sectors_staged"] == p.staging["sectors"] == 256 and p.staging["used"] == 4 / 32
    # short_loop: only 4 iterations of the 64 the stride would need: 16 of each row's 256 bytes
    (s,) = global_loads(m, "short_loop")
    assert s.staging["over"] == "loop" and s.staging["requests"] == 8 * 4
    assert s.staging["used"] == pytest.approx(16 / 32)
    assert sh3(m) == []


def test_kernel_that_already_stages_the_array_is_not_flagged():
    src = ROOT / "examples" / "rules" / "SH3_good.cu"
    m = analyze_model(parse_file(src))
    (strided,) = [a for a in global_loads(m, "aat_row_tile") if a.lane_stride == 32]
    assert strided.staging["used"] == 1.0  # the facts alone would call for SH3 ...
    assert sh3(m) == []  # ... but rows[] already holds a tile of `a`


def test_sh3_runs_the_access_model_on_a_parse_only_context():
    parsed = parse_file(ROOT / "examples" / "rules" / "SH3_bad.cu")
    assert all(k.block_dims is None for k in parsed.kernels)
    assert [f.kernel for f in sh3(parsed)] == ["aat_global", "row_sums", "transpose_naive"]
