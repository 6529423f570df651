#include <cstdio>
#include <cuda_runtime.h>

__global__ void offset_copy(float *out, const float *in, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x + offset;
  out[i] = in[i];
}

int main() {
  const int n = 1 << 22;
  float *d_out, *d_in;
  cudaMalloc(&d_out, sizeof(float) * (n + 32));
  cudaMalloc(&d_in, sizeof(float) * (n + 32));
  offset_copy<<<n / 256, 256>>>(d_out, d_in, 1);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
