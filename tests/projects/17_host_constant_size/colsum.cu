#include <cstdio>
#include <cuda_runtime.h>

// Each thread sums its own row of a row-major n x n matrix: lanes are n floats apart.
__global__ void colsum(const float *a, float *s, int n) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int r = 0; r < n; ++r) {
    acc += a[c * n + r];
  }
  s[c] = acc;
}

int main() {
  int n = 4096;
  float *d_a, *d_s;
  cudaMalloc(&d_a, sizeof(float) * n * n);
  cudaMalloc(&d_s, sizeof(float) * n);
  colsum<<<n / 128, 128>>>(d_a, d_s, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
