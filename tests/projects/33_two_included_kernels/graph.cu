#include <cstdio>
#include <cuda_runtime.h>

#define MAX_THREADS_PER_BLOCK 512

#include "kernel.cu"
#include "kernel2.cu"

int main() {
  const int n = 1 << 20;
  int num_blocks = (n + MAX_THREADS_PER_BLOCK - 1) / MAX_THREADS_PER_BLOCK;
  int *d_level, *d_label, *d_parent;
  cudaMalloc(&d_level, sizeof(int) * n);
  cudaMalloc(&d_label, sizeof(int) * n);
  cudaMalloc(&d_parent, sizeof(int) * n);
  dim3 grid(num_blocks, 1, 1);
  dim3 threads(MAX_THREADS_PER_BLOCK, 1, 1);
  init_levels<<<grid, threads>>>(d_level, n, 0);
  pull_labels<<<grid, threads>>>(d_label, d_parent, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
