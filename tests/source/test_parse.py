"""The CUDA C++ front end: kernels, params, arrays, loops, calls, launch sites, non-CUDA input."""

from __future__ import annotations

import pytest

from cudalens.errors import InputError
from cudalens.source import expr as E
from cudalens.source.parse import parse_file, parse_source

SRC = """
#include <cstdio>
#define N 1024
#define TILE 32
const int THREADS = 128;
__constant__ float coef[16];
template <typename T, int B>
__global__ void __launch_bounds__(256, 2) k1(const float* __restrict__ a, float *b, int n) {
  __shared__ float tile[TILE][TILE+1];
  float acc[4];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < n; j += 2) { b[i] = a[i + j] * coef[threadIdx.x % 16]; __syncthreads(); }
  if (i % 2 == 0) b[i] = 0;
}
__device__ int twice(int x) { return x * 2; }
__global__ void k2(float *a) { a[twice(threadIdx.x)] = 1.0f; }
int main() {
  dim3 block(16, 16);
  int threads = THREADS * 2;
  k2<<<N/256, threads, 0, 0>>>(nullptr);
  for (int r = 0; r < 3; ++r) {
    k1<float, 3><<<dim3(8, 4), block>>>(a, b, n);
    cudaMemcpy(a, b, 4, cudaMemcpyDeviceToHost);
  }
  cudaDeviceSynchronize();
}
"""


@pytest.fixture(scope="module")
def model():
    return parse_source(SRC, "t.cu")


def test_kernels_params_and_launch_bounds(model):
    k1, k2 = model.kernels
    assert (k1.name, k2.name) == ("k1", "k2")
    assert k1.is_template and not k2.is_template
    assert k1.template_params == ("T", "B")
    assert k1.launch_bounds == (256, 2)
    assert k2.launch_bounds is None
    a, b, n = k1.params
    assert a.is_pointer and a.is_restrict and a.is_const
    assert b.is_pointer and not b.is_restrict and not b.is_const
    assert not n.is_pointer and n.type == "int"
    assert model.device_functions == ("twice",)
    assert model.defines == {"N": "1024", "TILE": "32"}


def test_arrays_with_shapes(model):
    arrays = {a.name: a for a in model.kernels[0].arrays}
    assert arrays["tile"].space == "shared" and arrays["tile"].shape == (32, 33)
    assert arrays["acc"].space == "local" and arrays["acc"].shape == (4,)
    assert arrays["coef"].space == "constant" and arrays["coef"].element_bytes == 4


def test_loops_and_calls(model):
    (loop,) = model.kernels[0].loops
    assert (loop.induction_variable, loop.induction_type, loop.start, loop.step) == ("j", "int", "0", "2")
    sync = [c for c in model.kernels[0].calls if c.name == "__syncthreads"]
    assert sync and sync[0].loop_lines == (loop.line,)


def test_accesses_substitute_locals_and_inline_helpers(model):
    k1, k2 = model.kernels
    (store,) = k2.accesses
    assert store.op == "store" and store.space == "global"
    assert E.eval_scalar(store.index_expr, {"threadIdx.x": 5}) == 10
    loads = [a for a in k1.accesses if a.array == "a"]
    vals = {"blockIdx.x": 2, "blockDim.x": 256, "threadIdx.x": 3, "j@12": 4}
    assert E.eval_scalar(loads[0].index_expr, vals) == 2 * 256 + 3 + 4
    const = [a for a in k1.accesses if a.array == "coef"]
    assert const[0].space == "constant"


def test_launch_sites_and_host_calls(model):
    s1, s2 = model.launch_sites
    assert s1.kernel == "k2" and s1.block_dims == (256, 1, 1) and s1.grid_dims == (4, 1, 1)
    assert s2.kernel == "k1" and s2.block_dims == (16, 16, 1) and s2.grid_dims == (8, 4, 1)
    assert s2.loop_lines and not s1.loop_lines
    memcpy = [c for c in model.host_calls if c.name == "cudaMemcpy"]
    assert memcpy and memcpy[0].loop_lines == s2.loop_lines
    assert all(c.name not in ("k1", "k2") for c in model.host_calls)


@pytest.mark.parametrize("content", [
    b"import os\n\ndef main():\n    print('x')\n",
    b'{"a": [1, 2], "b": {"c": 3}}\n',
    bytes(range(256)) * 4,
    b"# Title\n\nSome text.\n- a\n- b\n",
])
def test_non_cuda_files_raise_input_error_naming_the_file(tmp_path, content):
    f = tmp_path / "thing.cu"
    f.write_bytes(content)
    with pytest.raises(InputError, match="thing.cu"):
        parse_file(f)


def test_odd_input_goes_to_problems_not_exceptions():
    m = parse_source("__global__ void k(float *a) { a[threadIdx.x = ; }\n#define X (\n", "odd.cu")
    assert m.problems
    assert [k.name for k in m.kernels] == ["k"]


EXTERN_C = """
#define N 64
extern "C" __global__ void one_line(float *a) { a[threadIdx.x] = 1.0f; }
extern "C" {
__device__ float helper(float x) { return x; }
__global__ void __launch_bounds__(128) in_block(const float *__restrict__ a, float *b, int n) {
  b[threadIdx.x] = a[threadIdx.x * n];
}
}
extern "C" __global__ void __launch_bounds__(256, 2) bounded(float *a) { a[threadIdx.x * N] = 0; }
extern "C"
__global__ void
split_lines(float *a) { a[threadIdx.x] = 2.0f; }
namespace ns { extern "C" __global__ void in_namespace(float *a) { a[threadIdx.x] = 3.0f; } }
extern "C" void host_launch(float *a) { one_line<<<4, 64>>>(a); }
"""


def test_extern_c_kernels_are_found():
    m = parse_source(EXTERN_C, "ec.cu")
    assert [k.name for k in m.kernels] == ["one_line", "in_block", "bounded", "split_lines", "in_namespace"]
    by = {k.name: k for k in m.kernels}
    # a kernel's line is where its definition starts (__global__), not the extern "C" line above it
    assert by["one_line"].line == 3 and by["split_lines"].line == 12
    assert by["in_block"].launch_bounds == (128,) and by["bounded"].launch_bounds == (256, 2)
    assert [p.name for p in by["in_block"].params] == ["a", "b", "n"]
    assert by["in_block"].params[0].is_restrict
    # one store in each kernel, plus the load of a in in_block
    assert sorted((a.array, a.op) for a in by["in_block"].accesses) == [("a", "load"), ("b", "store")]
    assert all(len(by[n].accesses) == 1 for n in ("one_line", "bounded", "split_lines", "in_namespace"))
    assert m.device_functions == ("helper",)
    # a host function with C linkage is host code: its launch is found
    (site,) = m.launch_sites
    assert (site.kernel, site.grid_dims, site.block_dims) == ("one_line", (4, 1, 1), (64, 1, 1))
    assert m.problems == ()


def test_launch_argument_values():
    m = parse_source("""
#define W 16
const int H = 3;
__global__ void k(float *a, int n, float s) {}
int main(int argc, char **argv) {
  int w = W * 2;
  int r = atoi(argv[1]);
  for (int i = 0; i < 4; ++i) k<<<1, 32>>>(nullptr, w + H, 0.5f);
  k<<<1, 32>>>(0, r, i);
}
""")
    first, second = m.launch_sites
    assert first.args == ("nullptr", "w + H", "0.5f")
    assert first.arg_values == (None, 16 * 2 + 3, 0.5)
    assert second.arg_values == (0, None, None)  # a run-time value; a loop counter
