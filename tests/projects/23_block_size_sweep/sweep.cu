#include <cstdio>
#include <cuda_runtime.h>

__global__ void add_vec(float *c, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 24;
  float *d_a, *d_b, *d_c;
  cudaMalloc(&d_a, sizeof(float) * n);
  cudaMalloc(&d_b, sizeof(float) * n);
  cudaMalloc(&d_c, sizeof(float) * n);
  int block_sizes[] = {64, 128, 256, 512, 1024};
  for (int j = 0; j < 5; j++) {
    int block_size = block_sizes[j];
    add_vec<<<(n + block_size - 1) / block_size, block_size>>>(d_c, d_a, d_b, n);
    printf("block_size %4d: %s\n", block_size, cudaGetErrorString(cudaDeviceSynchronize()));
  }
  return 0;
}
