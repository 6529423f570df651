// Labelled real-world set: machine-learning style kernels. Our own minimal reproductions of shapes
// seen in llm.c, PyTorch extensions and tutorial GEMV/normalization code.
#include <cuda_runtime.h>

// Row-per-thread layer norm: lane i reads row i, so consecutive lanes are C elements apart.
__global__ void layernorm_row_per_thread(const float *x, float *y, int rows, int C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float mean = 0.0f;
    for (int c = 0; c < C; ++c) mean += x[row * C + c];
    mean /= C;
    for (int c = 0; c < C; ++c) y[row * C + c] = x[row * C + c] - mean;
}

// GEMV with a thread per output row of a row-major matrix: strided reads of A.
__global__ void gemv_row_per_thread(const float *A, const float *x, float *y, int M, int N) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    float acc = 0.0f;
    for (int k = 0; k < N; ++k) acc += A[row * N + k] * x[k];
    y[row] = acc;
}

// GEMV on a column-major matrix: lanes read consecutive rows, coalesced.
__global__ void gemv_col_major(const float *A, const float *x, float *y, int M, int N) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    float acc = 0.0f;
    for (int k = 0; k < N; ++k) acc += A[k * M + row] * x[k];
    y[row] = acc;
}

// Bias add over a 2-D activation with rows on blockIdx.y: coalesced, nothing to fix.
__global__ void bias_add(float *act, const float *bias, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (c < C) act[r * C + c] += bias[c];
}

// Residual add with float4 packing: nothing to fix.
__global__ void residual_add4(const float4 *a, const float4 *b, float4 *out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 u = a[i], v = b[i];
        out[i] = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
    }
}

// Warp-per-row reduction with a butterfly shuffle and a lane-0 store: nothing to fix.
__global__ void row_sum_warp(const float *x, float *out, int rows, int C) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= rows) return;
    float acc = 0.0f;
    for (int c = lane; c < C; c += 32) acc += x[warp * C + c];
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, off);
    if (lane == 0) out[warp] = acc;
}

// Embedding lookup: each block copies one row picked by a token id; coalesced within the row.
__global__ void embedding_gather(const int *tokens, const float *table, float *out, int C) {
    int t = blockIdx.x;
    int tok = tokens[t];
    for (int c = threadIdx.x; c < C; c += blockDim.x) out[t * C + c] = table[tok * C + c];
}

// ReLU backward with the gradient mask read as bytes: fine.
__global__ void relu_backward(const float *x, const float *dy, float *dx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

// Attention-score scaling with a double constant (1/sqrt(64) written as a double literal).
__global__ void scale_scores(float *s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) s[i] = s[i] * 0.125;
}

// Column normalization with a thread per column of a row-major matrix: the column's normalizer is
// re-read on every row because the store to out may alias it.
__global__ void normalize_columns(const float *m, const float *norm, float *out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    for (int r = 0; r < rows; ++r) out[r * cols + c] = m[r * cols + c] / norm[c];
}

void launch_ml(float *a, float *b, float *c, float4 *v, int *tok, int n) {
    layernorm_row_per_thread<<<(4096 + 255) / 256, 256>>>(a, b, 4096, 768);
    gemv_row_per_thread<<<(4096 + 255) / 256, 256>>>(a, b, c, 4096, 4096);
    gemv_col_major<<<(4096 + 255) / 256, 256>>>(a, b, c, 4096, 4096);
    bias_add<<<dim3(3, 4096), 256>>>(a, b, 768);
    residual_add4<<<n / 256, 256>>>(v, v, v, n);
    row_sum_warp<<<4096 / 8, 256>>>(a, b, 4096, 768);
    embedding_gather<<<1024, 256>>>(tok, a, b, 768);
    relu_backward<<<n / 256, 256>>>(a, b, c, n);
    scale_scores<<<n / 256, 256>>>(a, n);
    normalize_columns<<<(4096 + 255) / 256, 256>>>(a, b, c, 1024, 4096);
}
