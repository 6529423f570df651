#include <cstdio>
#include <cuda_runtime.h>

#include "tiling/config.h"
#include "transpose.h"

int main() {
  const int width = 2048, height = 2048;
  float *d_in, *d_out;
  cudaMalloc(&d_in, sizeof(float) * width * height);
  cudaMalloc(&d_out, sizeof(float) * width * height);
  dim3 grid(width / TILE_DIM, height / TILE_DIM);
  dim3 threads(TILE_DIM, BLOCK_ROWS);
  transpose_naive<<<grid, threads>>>(d_out, d_in, width, height);
  transpose_shared<<<grid, threads>>>(d_out, d_in, width, height);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
