// Host pattern (seen in research code): a scratch buffer allocated and freed on every iteration.
#include <cuda_runtime.h>

__global__ void square_into(const float *in, float *tmp, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) tmp[i] = in[i] * in[i];
}

int process_batches(const float *dev_in, int n, int batches) {
    for (int b = 0; b < batches; ++b) {
        float *tmp = nullptr;
        if (cudaMalloc(&tmp, n * sizeof(float)) != cudaSuccess) return 1;
        square_into<<<(n + 255) / 256, 256>>>(dev_in + b * n, tmp, n);
        if (cudaGetLastError() != cudaSuccess) return 1;
        if (cudaFree(tmp) != cudaSuccess) return 1;
    }
    return 0;
}
