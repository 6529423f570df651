"""A CuPy program of our own with a known uncoalesced kernel and small pageable copies
(cudalens profile example (b)).

`column_sum` reads a row-major matrix down its columns with one thread per row: consecutive threads
of a warp read addresses `cols` floats apart, so every load touches a different 32-byte sector
(uncoalesced, catalog G1/G3). `row_scale` is its coalesced counterpart. Each iteration uploads a
small NumPy array (pageable host memory) and downloads a small result: many small synchronous
pageable copies between kernels (X1-X4).
"""

import sys

import cupy as cp
import numpy as np

SOURCE = r"""
extern "C" __global__ void column_sum(const float* m, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.0f;
    for (int c = 0; c < cols; ++c) {
        acc += m[r * cols + c];
    }
    out[r] = acc;
}

extern "C" __global__ void row_scale(float* m, const float* s, int n, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        m[i] = m[i] * s[i / cols];
    }
}
"""


def main() -> int:
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    rows, cols = 8192, 1024
    mod = cp.RawModule(code=SOURCE)
    column_sum = mod.get_function("column_sum")
    row_scale = mod.get_function("row_scale")
    m = cp.random.random((rows, cols), dtype=cp.float32)
    out = cp.empty(rows, dtype=cp.float32)
    total = 0.0
    for _ in range(iters):
        scale = np.random.random(rows).astype(np.float32)  # pageable host memory
        s = cp.asarray(scale)  # small synchronous host-to-device copy
        row_scale(((rows * cols + 255) // 256,), (256,), (m, s, np.int32(rows * cols), np.int32(cols)))
        column_sum(((rows + 127) // 128,), (128,), (m, out, np.int32(rows), np.int32(cols)))
        total += float(out[:16].get().sum())  # small device-to-host copy every iteration
    print(f"{iters} iterations, checksum {total:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
