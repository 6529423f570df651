// I13: paired __half2 arithmetic in the loop.
#include <cuda_fp16.h>

__global__ void haxpy(int n2, __half2 a, const __half2 *x, __half2 *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += gridDim.x * blockDim.x) {
        y[i] = __hfma2(a, x[i], y[i]);
    }
}

__global__ void tail(const __half *x, __half *y, __half a, int n)
{
    if (threadIdx.x == 0 && (n & 1)) {
        y[n - 1] = __hmul(a, x[n - 1]);   // one scalar element outside any loop
    }
}
