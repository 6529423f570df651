#include "helper_check.h"

__global__ void copy_rows(float *odata, const float *idata, int width) {
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    odata[(y + j) * width + x] = idata[(y + j) * width + x];
  }
}

__global__ void transpose_columns(float *odata, const float *idata, int width, int height) {
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    odata[x * height + (y + j)] = idata[(y + j) * width + x];
  }
}

int main() {
  const int size_x = 2048, size_y = 2048;
  float *d_in, *d_out;
  check_cuda(cudaMalloc(&d_in, sizeof(float) * size_x * size_y));
  check_cuda(cudaMalloc(&d_out, sizeof(float) * size_x * size_y));
  dim3 grid(size_x / TILE_DIM, size_y / TILE_DIM);
  dim3 threads(TILE_DIM, BLOCK_ROWS);
  copy_rows<<<grid, threads>>>(d_out, d_in, size_x);
  check_cuda(cudaGetLastError());
  transpose_columns<<<grid, threads>>>(d_out, d_in, size_x, size_y);
  check_cuda(cudaGetLastError());
  check_cuda(cudaDeviceSynchronize());
  return 0;
}
