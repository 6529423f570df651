#include <cstdio>
#include <cuda_runtime.h>

__global__ void transpose_edge(float *out, const float *in, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    out[x * h + y] = in[y * w + x];
  }
}

int main() {
  const int w = 1000, h = 1000;
  float *d_in, *d_out;
  cudaMalloc(&d_in, sizeof(float) * w * h);
  cudaMalloc(&d_out, sizeof(float) * w * h);
  dim3 block(32, 8);
  dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
  transpose_edge<<<grid, block>>>(d_out, d_in, w, h);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
