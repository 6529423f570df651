#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void scale(float *d, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = a * d[i];
}

// The first column of a row-major rows x cols matrix.
__global__ void column_of(const float *m, float *col, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) col[r] = m[r * cols];
}

int main(int argc, char **argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 4096;
  int cols = argc > 2 ? atoi(argv[2]) : 1024;
  if (rows <= 0 || cols <= 0) {
    fprintf(stderr, "usage: %s [rows] [cols]\n", argv[0]);
    return 1;
  }
  float *d_m, *d_col;
  cudaMalloc(&d_m, sizeof(float) * rows * cols);
  cudaMalloc(&d_col, sizeof(float) * rows);
  scale<<<(rows * cols + 255) / 256, 256>>>(d_m, 2.0f, rows * cols);
  column_of<<<(rows + 255) / 256, 256>>>(d_m, d_col, rows, cols);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
