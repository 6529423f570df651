#include <cstdio>
#include <cuda_runtime.h>

#include "common.h"

// includes, kernels
#include "flip_kernel.cu"

int main() {
  int w = 2048, h = 2048;
  float *d_in, *d_out;
  cudaMalloc(&d_in, sizeof(float) * w * h);
  cudaMalloc(&d_out, sizeof(float) * w * h);
  dim3 block(BLOCK_SIZE, BLOCK_SIZE);
  dim3 grid(w / BLOCK_SIZE, h / BLOCK_SIZE);
  flip_kernel<<<grid, block>>>(d_in, d_out, w, h);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  cudaFree(d_in);
  cudaFree(d_out);
  return 0;
}
