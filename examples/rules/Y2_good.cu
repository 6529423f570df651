// Y2: check for a device first and fall back to the CPU.
#include <cstdio>

__global__ void fill(float *x) { x[threadIdx.x] = 1.0f; }

static void fill_cpu(float *x) { for (int i = 0; i < 256; ++i) x[i] = 1.0f; }

int main()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        float h[256];
        fill_cpu(h);
        printf("no CUDA device: ran on the CPU\n");
        return 0;
    }
    float *d;
    cudaMalloc(&d, 256 * sizeof(float));
    fill<<<1, 256>>>(d);
    cudaFree(d);
    return 0;
}
