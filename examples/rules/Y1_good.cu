// Y1: every call checked through a macro; launches followed by cudaGetLastError.
#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

__global__ void fill(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 1.0f; }

int main()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return 1;
    const int n = 1 << 20;
    float *d;
    CUDA_CHECK(cudaMalloc(&d, n * sizeof(float)));
    fill<<<n / 256, 256>>>(d, n);
    CUDA_CHECK(cudaGetLastError());
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return 2;
    (void)cudaFree(d);   // deliberately ignored at exit
    return 0;
}
