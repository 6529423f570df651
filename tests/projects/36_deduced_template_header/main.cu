#include <cstdio>
#include <cuda_runtime.h>

#include "ops.cuh"

int main() {
  const int n = 1 << 20;
  double *d_out, *d_in;
  cudaMalloc(&d_out, sizeof(double) * n);
  cudaMalloc(&d_in, sizeof(double) * n * 2);
  launch_every_other(d_out, d_in, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
