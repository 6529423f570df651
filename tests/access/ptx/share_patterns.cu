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
