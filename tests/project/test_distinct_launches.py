"""Every distinct launch of a kernel (issue #26): llm.c dev/cuda's mains loop over block sizes and
pass their sizes down through a dispatch function to a launcher. The launch layer keeps one launch
per block size, in program order, with the values main passes (V = 50257 reaches the kernel's C)."""

from __future__ import annotations

from pathlib import Path

from cudalens.project.resolve import resolve_models
from cudalens.source.parse import parse_file

KERNEL = """
__global__ void rows(float *out, const float *in, int N, int C) {
  const float *x = in + blockIdx.x * C;
  for (int i = threadIdx.x; i < C; i += blockDim.x) out[blockIdx.x * C + i] = x[i];
}
"""

WRAPPERS = KERNEL + """
void rows1(float *out, const float *in, int N, int C, const int block_size) {
  int grid_size = N;
  rows<<<grid_size, block_size>>>(out, in, N, C);
}

void run(int kernel_num, float *out, const float *in, int N, int C, const int block_size) {
  switch (kernel_num) {
    case 1: rows1(out, in, N, C, block_size); break;
  }
}

int main(int argc, char **argv) {
  int B = 8, T = 1024, V = 50257;
  float *d_out, *d_in;
  int kernel_num = 1;
  if (argc > 1) kernel_num = atoi(argv[1]);
  int block_sizes[] = {32, 64, 128};
  for (int j = 0; j < sizeof(block_sizes) / sizeof(int); j++) {
    int block_size = block_sizes[j];
    run(kernel_num, d_out, d_in, B * T, V, block_size);
  }
  for (int j = 0; j < sizeof(block_sizes) / sizeof(int); j++) {
    int block_size = block_sizes[j];
    run(kernel_num, d_out, d_in, B * T, V, block_size);
  }
  return 0;
}
"""

COUNTED = KERNEL + """
int ceil_div(int a, int b) { return (a + b - 1) / b; }
int main() {
  int n = 4096, c = 1000;
  float *o, *i;
  for (int bs = 64; bs <= 256; bs *= 2) {
    rows<<<ceil_div(n, bs), bs>>>(o, i, n, c);
  }
  return 0;
}
"""


def _table(tmp_path: Path, text: str):
    f = tmp_path / "k.cu"
    f.write_text(text)
    model = parse_file(str(f), ())
    return model, resolve_models([model], str(tmp_path))


def test_loop_over_block_sizes_through_wrappers_gives_each_launch(tmp_path):
    model, table = _table(tmp_path, WRAPPERS)
    (k,) = model.kernels
    launches = table.distinct(k)
    assert [r.block for r in launches] == [(32, 1, 1), (64, 1, 1), (128, 1, 1)]
    for r in launches:
        assert r.grid == (8 * 1024, 1, 1)
        assert dict(r.params) == {"N": 8 * 1024, "C": 50257}
        assert r.site == "k.cu:9"
    first = table.resolve(k)
    assert first.block == (32, 1, 1)  # the first in program order: what ncu profiles first
    assert any("(64, 1, 1), (128, 1, 1) at k.cu:9" in n for n in first.notes)


def test_counted_loop_gives_each_launch_and_ceil_div_grids(tmp_path):
    model, table = _table(tmp_path, COUNTED)
    (k,) = model.kernels
    got = [(r.block[0], r.grid[0]) for r in table.distinct(k)]
    assert got == [(bs, -(-4096 // bs)) for bs in (64, 128, 256)]
    assert all(dict(r.params)["C"] == 1000 for r in table.distinct(k))
    assert any("bs = 64 (iteration 1 of 3 of the loop at line" in n for n in table.resolve(k).notes)


def test_a_user_block_gives_one_launch(tmp_path):
    model, table = _table(tmp_path, WRAPPERS)
    (k,) = model.kernels
    (only,) = table.distinct(k, block=(256, 1, 1))
    assert only.block == (256, 1, 1) and only.origin == "user"


def test_a_site_means_its_own_units_kernel_not_a_same_named_one_beside_it(tmp_path):
    (tmp_path / "a.cu").write_text(KERNEL + "int main() { rows<<<4, 256>>>(0, 0, 4, 1024); return 0; }\n")
    (tmp_path / "b.cu").write_text(WRAPPERS)
    models = [parse_file(str(tmp_path / n), ()) for n in ("a.cu", "b.cu")]
    table = resolve_models(models, str(tmp_path))
    mine = next(k for k in models[1].kernels if k.name == "rows")
    assert [r.site for r in table.distinct(mine)] == ["b.cu:9"] * 3
    assert table.resolve(mine).block == (32, 1, 1)


CONDITIONAL = KERNEL + """
void launcher(float *o, const float *in, int n, int block_size) {
  if (block_size == 1024) {
    block_size = 512;  // this kernel's limit
  }
  rows<<<n / block_size, block_size>>>(o, in, n, 100);
}
int main() {
  float *o, *in;
  for (int bs = 256; bs <= 1024; bs *= 2) launcher(o, in, 1 << 20, bs);
  return 0;
}
"""


def test_an_assignment_under_an_if_applies_only_when_its_condition_holds(tmp_path):
    model, table = _table(tmp_path, CONDITIONAL)
    (k,) = model.kernels
    assert [r.block[0] for r in table.distinct(k)] == [256, 512]  # 1024 becomes 512: the same launch


OPTION = KERNEL + """
void bench(float *o, const float *in, int n) {
  rows<<<n / 256, 256>>>(o, in, n, n);
}
void shmoo(float *o, const float *in) {
  for (int n = 1024; n <= 4096; n *= 2) bench(o, in, n);
}
int main(int argc, char **argv) {
  float *o, *in;
  bool sweep = argc > 1 && argv[1][0] == 's';
  if (sweep) {
    shmoo(o, in);
  } else {
    bench(o, in, 1 << 20);
  }
  return 0;
}
"""


def test_launches_under_a_command_line_option_come_after_the_default_run(tmp_path):
    model, table = _table(tmp_path, OPTION)
    (k,) = model.kernels
    assert [dict(r.params)["C"] for r in table.distinct(k)] == [1 << 20, 1024, 2048, 4096]
    assert dict(table.resolve(k).params)["C"] == 1 << 20


MEMBERS = KERNEL + """
#define NUMBER_THREADS 128
int main() {
  dim3 threads;
  dim3 blocks;
  blocks.x = 1000;
  blocks.y = 1;
  threads.x = NUMBER_THREADS;
  threads.y = 1;
  rows<<<blocks, threads>>>(0, 0, 1000, 64);
  return 0;
}
"""


def test_dim3_set_member_by_member(tmp_path):
    model, table = _table(tmp_path, MEMBERS)
    (k,) = model.kernels
    launch = table.resolve(k)
    assert (launch.block, launch.grid) == ((128, 1, 1), (1000, 1, 1))


STEPPED = KERNEL + """
void batch(float *d, int M, int log2N) {
  const int THREADS = 256;
  int N = 1 << log2N;
  dim3 grid((1 << log2N) / (4 * THREADS), M, 1);
  for (; log2N > 11; log2N -= 2, N >>= 2, M <<= 2) {
    rows<<<grid, THREADS>>>(d, d, N, N / 4);
  }
  rows<<<M, N / 4>>>(d, d, N, log2N);
}
int main() { float *d; batch(d, 1, 15); return 0; }
"""


def test_a_loop_stepping_values_in_its_update_clause(tmp_path):
    """fastWalshTransform's form: each pass launches with the values stepped so far; after the loop
    the launch reads their final values; a dim3 made before the loop keeps the values of then."""
    model, table = _table(tmp_path, STEPPED)
    (k,) = model.kernels
    inside = [r for r in table.distinct(k) if r.site == "k.cu:12"]
    assert [(r.grid, dict(r.params)["C"]) for r in inside] == [((32, 1, 1), 1 << 13), ((32, 1, 1), 1 << 11)]
    (after,) = [r for r in table.distinct(k) if r.site == "k.cu:14"]
    assert (after.block, after.grid, dict(after.params)["C"]) == ((1 << 9, 1, 1), (16, 1, 1), 11)
