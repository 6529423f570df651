// Host pattern: return codes dropped and a launch never checked.
#include <cuda_runtime.h>

__global__ void zero(float *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = 0.0f;
}

void zero_buffer(float **d, int n) {
    cudaMalloc(d, n * sizeof(float));
    zero<<<(n + 255) / 256, 256>>>(*d, n);
    cudaDeviceSynchronize();
}
