#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void relax(float *u, const float *f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) u[i] = 0.5f * (u[i] + f[i]);
}

int main() {
  const int n = 1 << 22;
  const int iters = 100;
  size_t bytes = sizeof(float) * n;
  float *h_u = (float *)malloc(bytes);
  float *d_u, *d_f;
  cudaMalloc(&d_u, bytes);
  cudaMalloc(&d_f, bytes);
  for (int i = 0; i < n; ++i) h_u[i] = 0.0f;
  for (int it = 0; it < iters; ++it) {
    cudaMemcpy(d_u, h_u, bytes, cudaMemcpyHostToDevice);
    relax<<<n / 256, 256>>>(d_u, d_f, n);
    cudaMemcpy(h_u, d_u, bytes, cudaMemcpyDeviceToHost);
  }
  printf("%f\n", h_u[n / 2]);
  free(h_u);
  return 0;
}
