// I13: scalar half-precision arithmetic in loops.
#include <cuda_fp16.h>

__global__ void haxpy(int n, __half a, const __half *x, __half *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = __hfma(a, x[i], y[i]);  // expect: I13
    }
}

__global__ void hsum(int n, const __half *x, __half *out)
{
    __half acc = __float2half(0.0f);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        acc = acc + x[i];  // expect: I13
    }
    out[threadIdx.x] = acc;
}
