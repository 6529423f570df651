#include <cstdio>
#include <cuda_runtime.h>

#include "image.h"

__global__ void brighten(float *img, int width, int height, float gain) {
  int x = blockIdx.x * BLOCK_SIZE + threadIdx.x;
  int y = blockIdx.y * BLOCK_SIZE + threadIdx.y;
  if (x < width && y < height) img[y * width + x] *= gain;
}

int main() {
  const int width = 1024, height = 768;
  float *d_img;
  cudaMalloc(&d_img, sizeof(float) * width * height);
  dim3 threads(BLOCK_SIZE, BLOCK_SIZE);
  dim3 blocks(width / BLOCK_SIZE, height / BLOCK_SIZE);
  brighten<<<blocks, threads>>>(d_img, width, height, 1.5f);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
