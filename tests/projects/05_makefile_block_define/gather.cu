#include <cstdio>
#include <cuda_runtime.h>

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif

__global__ void gather8(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = in[i * 8];
  }
}

int main() {
  const int n = 1 << 20;
  float *d_in, *d_out;
  cudaMalloc(&d_in, sizeof(float) * n * 8);
  cudaMalloc(&d_out, sizeof(float) * n);
  dim3 block(BLOCK_SIZE);
  dim3 grid((n + BLOCK_SIZE - 1) / BLOCK_SIZE);
  gather8<<<grid, block>>>(d_in, d_out, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
