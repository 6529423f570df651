// Host pattern: a malloc'ed staging buffer uploaded on every step (pageable: each copy is staged
// by the driver through its own pinned buffer).
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void negate(float *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = -d[i];
}

int upload_and_negate(float *dev, int n, int steps) {
    float *host = (float *)malloc(n * sizeof(float));
    for (int s = 0; s < steps; ++s) {
        for (int i = 0; i < n; ++i) host[i] = (float)(i + s);
        if (cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) return 1;
        negate<<<(n + 255) / 256, 256>>>(dev, n);
        if (cudaGetLastError() != cudaSuccess) return 1;
    }
    free(host);
    return 0;
}
