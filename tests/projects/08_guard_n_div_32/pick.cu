#include <cstdio>
#include <cuda_runtime.h>

// Every 32nd element: one lane per 128-byte line.
__global__ void every32(float *out, const float *in, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n / 32) out[t] = in[t * 32];
}

int main() {
  const int n = 1 << 22;
  float *d_out, *d_in;
  cudaMalloc(&d_in, sizeof(float) * n);
  cudaMalloc(&d_out, sizeof(float) * (n / 32));
  every32<<<(n / 32 + 255) / 256, 256>>>(d_out, d_in, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
