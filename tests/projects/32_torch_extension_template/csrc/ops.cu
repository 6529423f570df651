#include <cuda_runtime.h>

#include "kernels.cuh"

void head_scale_cuda(float *x, float a, int n, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = (n / 4 + threads - 1) / threads;
  head_scale<float, 4><<<blocks, threads, 0, stream>>>(x, a, n);
}
