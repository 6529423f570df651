"""A row per block with a row length that is not a whole number of 32-byte sectors (llm.c's softmax
kernels over C = 50257 floats): 7 of every 8 row starts are misaligned, and a warp reading 32
consecutive floats from a misaligned start touches 5 sectors. The compiled model evaluates the blocks
of the alignment period, so its figure is the average over all the grid's rows; the expected figure
is computed here from the addresses of every block of the grid."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.access.ptx_eval import evaluate

SOURCE = """
__global__ void rows(float *out, const float *in, int C) {
  const float *x = in + blockIdx.x * C;
  for (int i = threadIdx.x; i < C; i += blockDim.x) {
    out[blockIdx.x * C + i] = 2.0f * x[i];
  }
}
"""
LINE = 5  # the loop body's line
BLOCK, GRID = 32, 64


def expected_sectors_per_request(c: int, block: int = BLOCK, grid: int = GRID, width: int = 4) -> float:
    """Sectors per warp request over every block of the grid: each warp's active lanes' addresses,
    from a 256-byte aligned buffer, counted as distinct 32-byte sectors."""
    sectors = requests = 0
    for b in range(grid):
        for start in range(0, c, block):
            for w in range(0, block, 32):
                lanes = [start + w + t for t in range(32) if start + w + t < c and w + t < block]
                if lanes:
                    sectors += len({(b * c + i) * width // 32 for i in lanes})
                    requests += 1
    return sectors / requests


@pytest.fixture(scope="module")
def module(ptx_of, tmp_path_factory):
    src = Path(tmp_path_factory.mktemp("rows")) / "rows.cu"
    src.write_text(SOURCE)
    return ptx_of(src)


def _figures(module, c: int):
    fn = next(f for f in module.entries if "rows" in f.name)
    ev = evaluate(module, fn, (BLOCK, 1, 1), (GRID, 1, 1), {2: c})
    got = {p.quantity: p for p in ev.predictions if p.line == LINE and p.quantity.startswith("global")}
    return ev, got


@pytest.mark.parametrize("c", [201, 203, 222])
def test_odd_row_length_averages_the_rows_alignment(module, c):
    ev, got = _figures(module, c)
    want = expected_sectors_per_request(c)
    # blocks 0 and 1 alone would give the average of one aligned and one misaligned row
    two_blocks = expected_sectors_per_request(c, grid=2)
    assert abs(want - two_blocks) > 0.1
    for q in ("global load sectors/request", "global store sectors/request"):
        assert got[q].value == pytest.approx(want, abs=0.01), (q, got[q].value, want)
    period = 32 // __import__("math").gcd(c * 4 % 32, 32)
    assert ev.blocks_evaluated == period
    assert any(f"repeats every {period} blocks" in n for n in ev.notes)


def test_rows_of_whole_sectors_keep_two_blocks(module):
    ev, got = _figures(module, 256)
    assert ev.blocks_evaluated == 2
    assert got["global load sectors/request"].value == pytest.approx(expected_sectors_per_request(256)) == 4.0
