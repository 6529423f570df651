#include <cstdio>
#include <cuda_runtime.h>

#include "access.cuh"

__global__ void halve(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = load_pair_first(in, i) * 0.5f;
}

int main() {
  const int n = 1 << 20;
  float *d_out, *d_in;
  cudaMalloc(&d_out, sizeof(float) * n);
  cudaMalloc(&d_in, sizeof(float) * n * 2);
  halve<<<n / 256, 256>>>(d_out, d_in, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
