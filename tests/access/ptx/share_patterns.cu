// Patterns of public code whose lines the compiled model left without a figure (issue #26, share).
#include <cuda_runtime.h>

// llm.c's layernorm: one lane per warp streams a statistic out through __stcs (inline PTX
// st.global.cs on the pointer plus an offset, no cvta), and every lane streams the row
__global__ void stream_stats(float* out, float* mean, const float* x, int N, int C) {
    int warps = blockDim.x / 32;
    int idx = blockIdx.x * warps + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (idx >= N) return;
    float m = x[idx * C];
    if (lane == 0 && mean != nullptr) {
        __stcs(mean + idx, m);  // STATS_STORE
    }
    for (int c = lane; c < C; c += 32) {
        __stcs(out + idx * C + c, m);  // ROW_STORE
    }
}

// a 64-bit size added to the address: a scalar, tried at its trial values, never a buffer
__global__ void offset_by_size(const char* in, char* out, size_t skip, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[skip + i];  // SKIP_LOAD
}

// rodinia's pathfinder: a pyramid of `iteration` steps narrows the valid columns by 2 * iteration;
// at iteration = 256 (every parameter nobody gave tried at one value) no thread is valid
__global__ void pyramid(int iteration, const int* src, int* dst, int cols, int border) {
    int tx = threadIdx.x;
    int small = 256 - iteration * 2;
    int x = small * blockIdx.x - border + tx;
    if (x >= 0 && x < cols && tx >= iteration && tx < 256 - iteration) {
        dst[x] = src[x];  // PYRAMID_COPY
    }
}

// rodinia's gaussian Fan2: a step t of the host's loop; with n = t no thread passes the guard
__global__ void eliminate(float* a, const float* m, int n, int t) {
    if (threadIdx.x + blockIdx.x * blockDim.x >= n - 1 - t) return;
    if (threadIdx.y + blockIdx.y * blockDim.y >= n - t) return;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    a[n * (x + 1 + t) + (y + t)] -= m[n * (x + 1 + t) + t];  // ELIMINATE_ROW
}

// a line no launch's thread takes at any value: it stays without a figure
__global__ void never(float* out, int n) {
    if (threadIdx.x >= 1024 + n * 0 && n > 0) out[threadIdx.x] = 1.0f;  // NEVER_STORE
}

// llm.c's layernorm_backward: per-lane float atomics on shared memory (ptxas makes each a load and a
// compare-and-swap loop on sm_90); lanes at distinct words of one row, and at every other word
__global__ void shared_sums(const float* in, float* out, int n) {
    __shared__ float sums[512];
    sums[threadIdx.x] = 0.0f;
    sums[threadIdx.x + 256] = 0.0f;
    __syncthreads();
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    atomicAdd(&sums[threadIdx.x], v);  // ROW_ATOMIC
    atomicAdd(&sums[threadIdx.x * 2 % 512], v);  // STRIDED_ATOMIC
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = sums[threadIdx.x] + n;
}
