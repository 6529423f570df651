#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

// Two phases over the whole grid: scale a column-major view, then read it back row-wise.
__global__ void two_phase(float *a, float *b, int rows, int cols) {
  cg::grid_group grid = cg::this_grid();
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < rows) {
    for (int c = 0; c < cols; ++c) a[t * cols + c] *= 2.0f;
  }
  grid.sync();
  if (t < rows * cols) b[t] = a[t];
}

int main() {
  int rows = 4096, cols = 64;
  float *d_a, *d_b;
  cudaMalloc(&d_a, sizeof(float) * rows * cols);
  cudaMalloc(&d_b, sizeof(float) * rows * cols);
  void *args[] = {&d_a, &d_b, &rows, &cols};
  cudaError_t err = cudaLaunchCooperativeKernel((void *)two_phase, dim3(132), dim3(256), args, 0, 0);
  printf("%s\n", cudaGetErrorString(err));
  cudaDeviceSynchronize();
  return 0;
}
