#include <cstdio>
#include <cuda_runtime.h>

__constant__ float c_gain[256];

__global__ void apply_gain(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * c_gain[threadIdx.x];
}

int main() {
  const int n = 1 << 20;
  float h_gain[256];
  for (int k = 0; k < 256; ++k) h_gain[k] = 1.0f + k / 256.0f;
  cudaMemcpyToSymbol(c_gain, h_gain, sizeof(h_gain));
  float *d_out, *d_in;
  cudaMalloc(&d_out, sizeof(float) * n);
  cudaMalloc(&d_in, sizeof(float) * n);
  apply_gain<<<n / 256, 256>>>(d_out, d_in, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
