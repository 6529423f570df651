"""Shared-memory lines of public programs that disagreed with the H100 (issues 26 and 27, session 8),
reproduced on kernels of our own (tests/access/ptx/issue27_patterns.cu): each figure is computed
here independently from the addresses (a warp's wavefronts are the most distinct 4-byte words any
one of the 32 banks serves) and compared with the model under the pipeline's default loop cap
and step budget; the counter rows are made by hand in the shape of the real source pages (rodinia
lavaMD kernel_gpu_cuda.cu:127, particlefilter likelihood_kernel:377), as each test says."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from _sources import entry, line_of
from cudalens.access.ptx_eval import evaluate
from cudalens.profile.ncu_source import SassRow, check_lines, line_counters

PATTERNS = Path(__file__).resolve().parent / "ptx" / "issue27_patterns.cu"


@pytest.fixture(scope="module")
def module(ptx_of):
    return ptx_of(PATTERNS)


def _fn(module, name):
    return entry(module, name, exact=True)


def _line(text: str) -> int:
    return line_of(PATTERNS, text)


def _at(ev, text: str, quantity: str):
    return next(p for p in ev.predictions if p.line == _line(text) and p.quantity == quantity)


def wavefronts(byte_addrs: list[int], width: int) -> int:
    """One warp's shared access: the most distinct 4-byte words one bank serves (0 with no lane)."""
    words: dict[int, set[int]] = {}
    for a in byte_addrs:
        for w in range(a // 4, (a + width) // 4):
            words.setdefault(w % 32, set()).add(w)
    return max((len(v) for v in words.values()), default=0)


def test_a_triangular_loop_past_the_loop_cap_runs_whole(module):
    """rodinia lud_diagonal (<<<1, 16>>>): the outer loop's 15 iterations pass the loop cap (8), and
    the line's figure shrinks with each (the active lanes are threadIdx.x > i): its first
    iterations predicted 5.0 N-way where the H100 measured 4.0. The loop now runs whole."""
    from cudalens.access.ptx_exec import Launch
    from cudalens.access.ptx_run import run

    fn = _fn(module, "lud_diagonal")
    cut = run(module, fn, Launch((1, 1, 1), (16, 1, 1), ((0, 0, 0),), {1: 64, 2: 0}, 1, 8, 6000))
    assert cut.complete and cut.truncated  # the cap alone stops the outer loop at 8 of its 15 iterations
    ev = evaluate(module, fn, (16, 1, 1), (1, 1, 1), {1: 64, 2: 0})  # the pipeline's cap and budget
    assert ev.complete and not any(lp["cut"] for lp in ev.loops)
    assert any("run to their trip count" in n for n in ev.notes)
    # shadow[threadIdx.x][i] /= shadow[i][i] for i = 0..14, lanes threadIdx.x > i: rows 64 bytes apart
    store = [wavefronts([(t * 16 + i) * 4 for t in range(i + 1, 16)], 4) for i in range(15)]
    diag = [wavefronts([(i * 16 + i) * 4] * (15 - i), 4) for i in range(15)]  # one word for every lane
    st = _at(ev, "// divide", "shared store wavefronts/request")
    assert st.value == round(sum(store) / 15, 4) == 4.2667 and st.nway == math.floor(sum(store) / 15)
    ld = _at(ev, "// divide", "shared load wavefronts/request")
    assert ld.value == round((sum(store) + sum(diag)) / 30, 4)


def _rows(kernel: str, line: int, shapes: list[tuple[str, float, float, float]]) -> tuple[SassRow, ...]:
    return tuple(SassRow(kernel, "k.cu", line, f"0x{k:04x}", sass, ex, None, None, nway, "Shared", 32.0, wf)
                 for k, (sass, ex, wf, nway) in enumerate(shapes))


def test_a_predicated_copy_that_never_ran_leaves_the_line_unpredicated(module):
    """rodinia lavaMD's fill `while (wtx < 100) { rB_shared[wtx] = rB[wtx]; wtx += 128; }`: ptxas
    unrolls it, and one unrolled copy is predicated (@P2) but never executes. The line is compared
    with the model's figure over the warps that store (6.25 wavefronts, N-way 6), not with the one
    that counts predicated-off executions (the counter rows: lavaMD's page, line 127, per block)."""
    ev = evaluate(module, _fn(module, "unrolled_fill"), (128, 1, 1), (2, 1, 1), blocks=((0, 0, 0), (1, 0, 0)))
    p = _at(ev, "// unrolled fill", "shared store wavefronts/request")
    # 100 elements of 32 bytes: warps 0-2 store 32 of them, warp 3 four; as two 16-byte halves
    per_warp = [wavefronts([e * 32 + h for e in range(w * 32, min(w * 32 + 32, 100))], 16)
                for w in range(4) for h in (0, 16)]
    assert per_warp[:2] == [8, 8] and per_warp[-1] == 1
    assert p.value == sum(per_warp) / len(per_warp) == 6.25 and p.nway == 6.0
    key = (p.kernel, p.file, p.line, "shared", "store")
    shapes = [("@P2   STS.128 [R39+0x2000], R20", 0, 0, 0), ("STS.128 [R39], R12", 4, 25, 6),
              ("STS.128 [R39+0x10], R16", 4, 25, 6), ("STS.128 [R65], R28", 0, 0, 0)]
    (c,) = line_counters(_rows(p.kernel, p.line, shapes)).values()
    assert not c.predicated and c.wavefronts_per_request == 6.25
    (chk,) = check_lines(ev.predictions, {key: c}, p.kernel)
    assert (chk.quantity, chk.predicted, chk.measured, chk.agree) == ("shared store wavefronts/request", 6.25, 6.25,
                                                                      True)
    ran = line_counters(_rows(p.kernel, p.line, [("@P2   STS.128 [R39+0x2000], R20", 4, 25, 6)] + shapes[1:]))
    assert next(iter(ran.values())).predicated  # a predicated copy that executed makes the line predicated


def test_a_partial_last_warp_is_compared_in_wavefronts(module):
    """rodinia particlefilter's `if (i < Nparticles) buffer[threadIdx.x] = weights[i]` (doubles),
    n = 1000 over 2 x 512 threads: 31 full warps take 2 wavefronts, the 8-lane one 1, and ncu prints
    the N-way as the whole part of 63 / 32: 1. Compared in wavefronts per request, the model's 2.0
    (n unknown) and 1.97 (n = 1000) both agree; the N-way (an export without the wavefront column)
    would set 2 against 1. Counter rows: the page's line 377 (ex 32, 63 wavefronts, N-way 1)."""
    fn = _fn(module, "edge_store")
    blocks = ((0, 0, 0), (1, 0, 0))
    lanes = [max(0, min(32, 1000 - (b * 512 + w * 32))) for b in range(2) for w in range(16)]
    expect = sum(wavefronts([t * 8 for t in range(a)], 8) for a in lanes) / len(lanes)
    assert expect == 63 / 32
    known = _at(evaluate(module, fn, (512, 1, 1), (2, 1, 1), {2: 1000}, blocks=blocks), "// edge store",
                "shared store wavefronts/request")
    assert known.value == round(expect, 4) and known.nway == 1.0
    ev = evaluate(module, fn, (512, 1, 1), (2, 1, 1), blocks=blocks)
    p = _at(ev, "// edge store", "shared store wavefronts/request")
    assert (p.value, p.nway) == (2.0, 2.0)
    key = (p.kernel, p.file, p.line, "shared", "store")
    (c,) = line_counters(_rows(p.kernel, p.line, [("STS.64 [R7], R4", 32, 63, 1)])).values()
    (chk,) = check_lines(ev.predictions, {key: c}, p.kernel)
    assert (chk.predicted, chk.measured, chk.agree) == (2.0, round(63 / 32, 4), True)
    (old,) = line_counters(tuple(SassRow(p.kernel, "k.cu", p.line, "0x0", "STS.64 [R7], R4", 32, None, None, 1.0,
                                         "Shared", 31.0) for _ in (0,))).values()
    (chk2,) = check_lines(ev.predictions, {key: old}, p.kernel)
    assert (chk2.quantity, chk2.predicted, chk2.measured, chk2.agree) == ("shared store conflict ways", 2.0, 1.0,
                                                                          False)
    # predicated SASS: how many warps have no lane on depends on n (256: 24 of 32), so a range over the trials
    assert p.value_predicated is None and p.value_predicated_range == (0.5, 2.0)
    (pc,) = line_counters(_rows(p.kernel, p.line, [("@!P0  STS.64 [R7], R4", 32, 63, 1)])).values()
    (chk3,) = check_lines(ev.predictions, {key: pc}, p.kernel)
    assert (chk3.predicted, chk3.low, chk3.high, chk3.agree) == (None, 0.5, 2.0, True)


INCLUDED = """struct four_vector { double v, x, y, z; };
__global__ void pair_forces(const four_vector *g, double *out, int n) {
    __shared__ four_vector rB[100];
    if (threadIdx.x < 100) rB[threadIdx.x] = g[threadIdx.x];
    __syncthreads();
    double acc = 0.0;
    for (int j = 0; j < n; j++) {
        acc += rB[j].v * rB[j].x;  // broadcast pair
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


def test_shared_widths_of_a_kernel_in_an_included_file_survive_the_compile_cache(tmp_path, monkeypatch,
                                                                                 nvcc_toolchain):
    """rodinia lavaMD keeps its kernel in a .cu that the wrapper includes: ptxas reads
    `rB_shared[j].v` and `.x` (two doubles, the same for every lane) as one LDS.128, and a 16-byte
    broadcast takes 2 wavefronts per full warp on the H100 (benchmarks/results/h100/
    shared_wide_probe.json: ld16_bcast), measured 1.75 over lavaMD's 25-lane warps. The SASS widths
    were kept only for the analyzed file's lines and lost on a compile-cache hit (the model then read
    two 8-byte broadcasts: 1 wavefront): they are now kept per written (file, line), in the cache too."""
    from cudalens.cli import main as cli_main
    from cudalens.compiled import compile_file
    from cudalens.evidence.compiled_access import sass_shared_widths

    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "forces.cu").write_text(INCLUDED)
    main = tmp_path / "main.cu"
    main.write_text('#include "forces.cu"\nint main() { return 0; }\n')
    line = INCLUDED.splitlines().index(next(t for t in INCLUDED.splitlines() if "// broadcast pair" in t)) + 1
    first, again = compile_file(main), compile_file(main)
    assert again.cache_hit and not first.cache_hit
    (k1,), (k2,) = first.kernels.values(), again.kernels.values()
    widths = k1.shared_widths[f"forces.cu:{line}"]  # the loop unrolled: LDS.128 (and the remainder's LDS.64)
    assert k1.shared_widths == k2.shared_widths and widths[16] > widths.get(8, 0)
    assert sass_shared_widths(again)[k2.mangled][("forces.cu", line)] == widths
    out = tmp_path / "r.json"  # as a user runs it on the unit the build compiles
    assert cli_main(["analyze", str(main), "--format", "json", "-o", str(out)]) in (0, 1)
    d = json.loads(out.read_text())
    (ev,) = [e for k in d["kernels"] if k["name"] == "pair_forces" for e in k["compiled_access"]]
    p = next(p for p in ev["predictions"] if p["file"].endswith("forces.cu") and p["line"] == line
             and p["quantity"] == "shared load wavefronts/request")
    # every warp reads the 16 bytes of rB[j] at once: 2 wavefronts (2 half-warp passes), merged by ptxas
    assert p["value"] == wavefronts([0] * 16, 16) * 2 == 2.0


def test_a_row_broadcast_is_its_own_ideal(module):
    """rodinia srad_v2 srad_kernel.cu:211, `C[... + cols * ty + BLOCK_SIZE - 1]` in a 16 x 16 block:
    a warp reads two floats 1 KiB apart, 2 sectors. The H100 counts 2 ideal sectors too (the page:
    line 208, 4096 sectors and 4096 ideal over 2048 executions; line 211's predicated copy 256 and 256),
    where the model counted the distinct bytes packed (1 sector: sectors over ideal 2.0, measured 1.0)."""
    import numpy as np

    from cudalens.access import memory as M

    ev = evaluate(module, _fn(module, "row_edge"), (16, 16, 1), (1, 1, 1), {2: 256})
    p = _at(ev, "// row edge", "global load sectors/request")
    rows = [[(256 * (2 * w + (lane >= 16)) + 15) * 4 for lane in range(32)] for w in range(8)]
    distinct_sectors = [len({a // 32 for a in r}) for r in rows]
    assert distinct_sectors == [2] * 8 and (p.value, p.ideal) == (2.0, 2.0)
    sectors, ideal = M.global_sectors(np.array(rows), np.ones((8, 32), bool), 4, distinct_ideal=True)
    assert sectors.tolist() == ideal.tolist() == distinct_sectors
    row = SassRow(p.kernel, "k.cu", p.line, "0x0", "@!P0  LDG.E R21, desc[UR10][R10.64]", 2048, 256, 256, None, "Global",
                  2.0)
    (c,) = line_counters((row,)).values()
    key = (p.kernel, p.file, p.line, "global", "load")
    (chk,) = check_lines(ev.predictions, {key: c}, p.kernel)
    assert (chk.quantity, chk.predicted, chk.measured, chk.agree) == ("global load sectors/ideal", 1.0, 1.0, True)
