#include <cuda_fp16.h>
__global__ void hf(__half *a) { a[threadIdx.x] = __float2half(1.0f); }
