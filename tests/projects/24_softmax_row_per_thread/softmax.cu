#include <cmath>
#include <cstdio>
#include <cuda_runtime.h>

#define CEIL_DIV(M, N) (((M) + (N) - 1) / (N))

// One thread per row (the first version in a kernel-tuning series): lanes are C floats apart.
__global__ void softmax_rows(float *out, const float *inp, int N, int C) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= N) return;
  const float *x = inp + row * C;
  float *y = out + row * C;
  float maxval = -INFINITY;
  for (int j = 0; j < C; j++) {
    maxval = fmaxf(maxval, x[j]);
  }
  float sum = 0.0f;
  for (int j = 0; j < C; j++) {
    y[j] = expf(x[j] - maxval);
    sum += y[j];
  }
  for (int j = 0; j < C; j++) {
    y[j] /= sum;
  }
}

int main() {
  int B = 8, T = 1024;
  int N = B * T, C = T;
  float *d_out, *d_inp;
  cudaMalloc(&d_out, sizeof(float) * N * C);
  cudaMalloc(&d_inp, sizeof(float) * N * C);
  const int block_size = 128;
  softmax_rows<<<CEIL_DIV(N, block_size), block_size>>>(d_out, d_inp, N, C);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
