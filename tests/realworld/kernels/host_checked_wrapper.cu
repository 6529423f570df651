// Host pattern (every CUDA project has one): an error-check wrapper with a name of its own. Each
// call and launch below is checked; nothing should be reported about error handling.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define ENSURE_OK(call)                                                          \
    do {                                                                         \
        cudaError_t status_ = (call);                                            \
        if (status_ != cudaSuccess) {                                            \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static void verify(cudaError_t e, const char *what) {
    if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e)); exit(1); }
}

__global__ void add_one(float *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] += 1.0f;
}

int main() {
    int count = 0;
    ENSURE_OK(cudaGetDeviceCount(&count));
    if (count == 0) return 0;
    const int n = 1 << 20;
    float *d = nullptr;
    ENSURE_OK(cudaMalloc(&d, n * sizeof(float)));
    add_one<<<n / 256, 256>>>(d, n);
    ENSURE_OK(cudaGetLastError());
    verify(cudaDeviceSynchronize(), "add_one");
    verify(cudaFree(d), "cudaFree");
    return 0;
}
