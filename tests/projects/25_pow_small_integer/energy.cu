#include <cstdio>
#include <cuda_runtime.h>

__global__ void kinetic(const float *v, const float *m, float *e, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) e[i] = 0.5f * m[i] * powf(v[i], 2.0f);
}

int main() {
  const int n = 1 << 20;
  float *d_v, *d_m, *d_e;
  cudaMalloc(&d_v, sizeof(float) * n);
  cudaMalloc(&d_m, sizeof(float) * n);
  cudaMalloc(&d_e, sizeof(float) * n);
  kinetic<<<n / 256, 256>>>(d_v, d_m, d_e, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
