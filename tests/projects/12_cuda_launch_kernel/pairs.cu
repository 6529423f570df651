#include <cstdio>
#include <cuda_runtime.h>

__global__ void take_pairs(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[2 * i];
}

int main() {
  int n = 1 << 20;
  float *d_out, *d_in;
  cudaMalloc(&d_out, sizeof(float) * n);
  cudaMalloc(&d_in, sizeof(float) * n * 2);
  void *args[] = {&d_out, &d_in, &n};
  cudaError_t err = cudaLaunchKernel((const void *)take_pairs, dim3(n / 128), dim3(128), args, 0, 0);
  printf("%s\n", cudaGetErrorString(err));
  cudaDeviceSynchronize();
  return 0;
}
