// Labelled real-world set: launch configurations. Our own minimal reproductions of launch sites seen
// in tutorials and research code (odd block sizes, single-block launches, tiny blocks).
#include <cuda_runtime.h>

__global__ void fill_odd_block(float *out, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v;
}

__global__ void fill_tiny_block(float *out, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v;
}

__global__ void single_block_loop(float *out, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = out[i] * 2.0f;
}

__global__ void fill_good(float *out, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v;
}

void launch_config(float *out, int n) {
    fill_odd_block<<<(n + 99) / 100, 100>>>(out, 1.0f, n);
    fill_tiny_block<<<(n + 31) / 32, 32>>>(out, 1.0f, n);
    single_block_loop<<<1, 256>>>(out, n);
    fill_good<<<(n + 255) / 256, 256>>>(out, 1.0f, n);
}

// A scalar update launched on one thread (a CG solver's alpha = -alpha), and an empty marker kernel
// for a profiler timeline: their launch sizes are deliberate, not a configuration to tune.
__global__ void negate_scalar(const float *a, float *na) { *na = -*a; }
__global__ void timeline_marker() {}

void launch_scalar(const float *a, float *na) {
    negate_scalar<<<1, 1>>>(a, na);
    timeline_marker<<<1, 1>>>();
}
