"""Launch values the host code computes (issue #26, llm.c and cuda-samples): a block from a static
constexpr member of a struct template over a typedef chosen by ``#if defined`` in an included header
(``Packed128<floatX>::size``), a block from a small host function with a loop
(``largestPowerOfTwoLessOrEqual``), and a size from a constant another file defines ``extern "C"``."""

from __future__ import annotations

from pathlib import Path

from cudalens.project.resolve import resolve_models
from cudalens.source.parse import parse_file

COMMON_H = """
template<class ElementType>
struct alignas(16) Packed128 {
    static constexpr const int size = sizeof(int4) / sizeof(ElementType);
    ElementType payload[size];
};
#if defined(ENABLE_BF16)
typedef __nv_bfloat16 floatX;
#elif defined(ENABLE_FP16)
typedef half floatX;
#else
typedef float floatX;
#endif
typedef Packed128<floatX> x128;
"""

PACKED = """
#define {precision}
#include "common.h"
__global__ void fused(floatX *out, int N, int C) {{
  out[threadIdx.x + 32 * threadIdx.y] = 0;
}}
void fused6(floatX *out, int N, int C, const int block_size) {{
  int warps_per_token = max(1, C / Packed128<floatX>::size / 32);
  int total_warps = block_size / 32;
  int block_z = max(1, total_warps / warps_per_token);
  int block_y = max(1, total_warps / block_z);
  fused<<<N, dim3(32, block_y, block_z)>>>(out, N, C);
}}
int main() {{
  int C = 768;
  floatX *o;
  int block_sizes[] = {{32, 256, 1024}};
  for (int j = 0; j < sizeof(block_sizes) / sizeof(int); j++) {{
    int block_size = block_sizes[j];
    fused6(o, 8192, C, block_size);
  }}
  return 0;
}}
"""


def _blocks(files: list[Path], kernel: str) -> list[tuple[int, int, int]]:
    models = [parse_file(f) for f in files]
    table = resolve_models(models)
    k = next(k for m in models for k in m.kernels if k.name == kernel)
    return [r.block for r in table.distinct(k)]


def test_static_member_of_a_template_over_a_typedef_gives_the_block(tmp_path: Path) -> None:
    (tmp_path / "common.h").write_text(COMMON_H)
    unit = tmp_path / "fused.cu"
    # bf16: 16 / 2 = 8 elements per Packed128, 768 / 8 / 32 = 3 warps per token
    unit.write_text(PACKED.format(precision="ENABLE_BF16"))
    assert _blocks([unit], "fused") == [(32, 1, 1), (32, 4, 2), (32, 3, 10)]
    # float: 4 elements, 6 warps per token
    unit.write_text(PACKED.format(precision="UNRELATED"))
    assert _blocks([unit], "fused") == [(32, 1, 1), (32, 8, 1), (32, 6, 5)]


def test_an_alias_of_the_template_and_an_undecided_typedef(tmp_path: Path) -> None:
    (tmp_path / "common.h").write_text(COMMON_H.replace("#if defined(ENABLE_BF16)", "#if SOME_LEVEL > 2"))
    unit = tmp_path / "fused.cu"
    unit.write_text(PACKED.format(precision="ENABLE_BF16").replace("Packed128<floatX>::size", "x128::size"))
    # floatX is bf16 or float depending on a condition the analysis does not decide: no block
    models = [parse_file(unit)]
    k = models[0].kernels[0]
    launches = resolve_models(models).distinct(k)
    assert all("not derivable" in " ".join(r.notes) for r in launches[:1])
    (tmp_path / "common.h").write_text(COMMON_H)
    assert _blocks([unit], "fused") == [(32, 1, 1), (32, 4, 2), (32, 3, 10)]


POW2 = """
__host__ __device__ int largestPowerOfTwoLessOrEqual(int n) {
    if (n < 1) {
        return 0;
    }
    while ((n & (n - 1)) > 0) {
        n = n & (n - 1);
    }
    return n;
}
int spin(int n) { while (n > 0) { n = n + 1; } return n; }
__global__ void bias(float *d, int OC) { d[blockIdx.x * blockDim.x + threadIdx.x] = 0; }
void bias1(float *d, int OC, int block_size) {
    block_size = largestPowerOfTwoLessOrEqual(block_size);
    bias<<<OC, block_size>>>(d, OC);
}
void bias2(float *d, int OC, int block_size) {
    bias<<<OC, spin(block_size)>>>(d, OC);
}
int main() {
    float *d;
    int block_sizes[] = {32, 768, 1024};
    for (int j = 0; j < sizeof(block_sizes) / sizeof(int); j++) {
        int block_size = block_sizes[j];
        bias1(d, 3072, block_size);
    }
    bias2(d, 3072, 64);
    return 0;
}
"""


def test_a_small_host_function_with_a_loop_is_run(tmp_path: Path) -> None:
    unit = tmp_path / "bias.cu"
    unit.write_text(POW2)
    models = [parse_file(unit)]
    k = models[0].kernels[0]
    launches = resolve_models(models).distinct(k)
    # 768 -> 512; the call that never returns (step budget) gives no block
    assert [r.block for r in launches if r.site.endswith(":15")] == [(32, 1, 1), (512, 1, 1), (1024, 1, 1)]
    assert not any(r.block == (64, 1, 1) for r in launches)


SCAN = """
#define THREADBLOCK_SIZE 256
__global__ void scanShared(unsigned *d, unsigned size) { d[threadIdx.x * size] = 0; }
extern "C" const unsigned MIN_SHORT_ARRAY_SIZE = 4;
extern "C" const unsigned MAX_SHORT_ARRAY_SIZE = 4 * THREADBLOCK_SIZE;
extern "C" {
const unsigned OTHER_SIZE = 8;
}
extern "C" void scanShort(unsigned *d, unsigned batch, unsigned arrayLength) {
    scanShared<<<(batch * arrayLength) / (4 * THREADBLOCK_SIZE), THREADBLOCK_SIZE>>>(d, arrayLength);
}
"""

MAIN = """
extern "C" const unsigned MIN_SHORT_ARRAY_SIZE;
extern "C" const unsigned MAX_SHORT_ARRAY_SIZE;
extern "C" void scanShort(unsigned *d, unsigned batch, unsigned arrayLength);
int main() {
    unsigned *d;
    const unsigned N = 13 * 1048576 / 2;
    for (unsigned arrayLength = MIN_SHORT_ARRAY_SIZE; arrayLength <= MAX_SHORT_ARRAY_SIZE; arrayLength <<= 1)
        scanShort(d, N / arrayLength, arrayLength);
    return 0;
}
"""


def test_a_constant_another_file_defines_extern_reaches_the_callers_loop(tmp_path: Path) -> None:
    (tmp_path / "scan.cu").write_text(SCAN)
    (tmp_path / "main.cpp").write_text(MAIN)
    models = [parse_file(tmp_path / "scan.cu"), parse_file(tmp_path / "main.cpp")]
    k = models[0].kernels[0]
    launches = resolve_models(models).distinct(k)
    # (the first MAX_SEEDS = 8 tuples a wrapper's callers pass)
    assert [dict(r.params)["size"] for r in launches] == [4, 8, 16, 32, 64, 128, 256, 512]
    assert launches[0].grid == (6656, 1, 1)
    # a constant with internal linkage is not another file's to read
    (tmp_path / "scan.cu").write_text(SCAN.replace('extern "C" const unsigned MIN', "static const unsigned MIN"))
    models = [parse_file(tmp_path / "scan.cu"), parse_file(tmp_path / "main.cpp")]
    launches = resolve_models(models).distinct(models[0].kernels[0])
    assert "size" not in dict(launches[0].params)


def test_a_host_ceil_div_the_interpreter_cannot_run_keeps_its_known_meaning(tmp_path: Path) -> None:
    unit = tmp_path / "k.cu"
    unit.write_text("""
#include <cstdio>
__global__ void k(float *o) { o[threadIdx.x] = 0; }
int ceil_div(int a, int b) { printf("%d", b); return (a + b - 1) / b; }
int pow2(int n) { assert(n > 0); int p = 1; for (int i = 0; i < 20 && p * 2 <= n; ++i) p *= 2; return p; }
int main() { float *o; k<<<ceil_div(1000, 128), pow2(300)>>>(o); return 0; }
""")
    models = [parse_file(unit)]
    (r,) = resolve_models(models).distinct(models[0].kernels[0])
    assert (r.grid, r.block) == ((8, 1, 1), (256, 1, 1))
