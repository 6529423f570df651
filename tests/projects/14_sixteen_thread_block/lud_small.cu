#include <cstdio>
#include <cuda_runtime.h>

#define BLOCK_SIZE 16

__global__ void scale_rows16(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}

int main() {
  const int n = 1 << 20;
  float *d_x, *d_y;
  cudaMalloc(&d_x, sizeof(float) * n);
  cudaMalloc(&d_y, sizeof(float) * n);
  scale_rows16<<<n / BLOCK_SIZE, BLOCK_SIZE>>>(d_y, d_x, 3.0f, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
