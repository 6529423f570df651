// A per-thread array indexed by a value known only at run time lives in local memory (the stack);
// the same array indexed only by unrolled constants stays in registers.

__global__ void dynamic_index(const int* __restrict__ idx, const float* __restrict__ in,
                              float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float hist[16];
    for (int k = 0; k < 16; ++k) hist[k] = 0.0f;
    for (int k = 0; k < 32; ++k) hist[idx[i * 32 + k] & 15] += in[i];  // run-time index: stack
    float s = 0.0f;
    for (int k = 0; k < 16; ++k) s += hist[k] * k;
    out[i] = s;
}

__global__ void constant_index(const float* __restrict__ in, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float window[16];
#pragma unroll
    for (int k = 0; k < 16; ++k) window[k] = in[i] * (k + 1);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 16; ++k) s += window[k];
    out[i] = s;
}
