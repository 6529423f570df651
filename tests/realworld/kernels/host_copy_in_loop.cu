// Host pattern (seen in iterative solvers and tutorials): the whole array goes back and forth
// across PCIe on every time step although only the kernel reads and writes it.
#include <cuda_runtime.h>

__global__ void relax_step(float *u, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) u[i] = 0.5f * (u[i - 1] + u[i + 1]);
}

int run_relaxation(float *host, float *dev, int n, int steps) {
    for (int s = 0; s < steps; ++s) {
        if (cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) return 1;
        relax_step<<<(n + 255) / 256, 256>>>(dev, n);
        if (cudaGetLastError() != cudaSuccess) return 1;
        if (cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
    }
    return 0;
}
