// Host pattern: a large transfer from a malloc'ed (pageable) buffer.
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void negate(float *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = -d[i];
}

int upload_and_negate(float *dev, int n) {
    float *host = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) host[i] = (float)i;
    if (cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) return 1;
    negate<<<(n + 255) / 256, 256>>>(dev, n);
    if (cudaGetLastError() != cudaSuccess) return 1;
    free(host);
    return 0;
}
