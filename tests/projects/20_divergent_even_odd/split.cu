#include <cstdio>
#include <cuda_runtime.h>

__global__ void even_odd(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = a[i];
  if (threadIdx.x % 2 == 0) {
    for (int k = 0; k < 64; ++k) v = v * 1.0001f + 0.5f;
  } else {
    for (int k = 0; k < 64; ++k) v = v * 0.9999f - 0.25f;
  }
  a[i] = v;
}

int main() {
  const int n = 1 << 20;
  float *d_a;
  cudaMalloc(&d_a, sizeof(float) * n);
  even_odd<<<n / 256, 256>>>(d_a, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
