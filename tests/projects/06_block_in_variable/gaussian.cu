#include <cstdio>
#include <cuda_runtime.h>

#ifdef RD_WG_SIZE
#define BLOCK_SIZE_XY RD_WG_SIZE
#else
#define BLOCK_SIZE_XY 4
#endif

// One elimination step: rows below t are updated from row t.
__global__ void eliminate(float *a, const float *m, int n, int t) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= n - 1 - t) return;
  if (y >= n - t) return;
  a[(x + 1 + t) * n + (y + t)] -= m[(x + 1 + t) * n + t] * a[t * n + (y + t)];
}

int main() {
  const int n = 1024;
  float *d_a, *d_m;
  cudaMalloc(&d_a, sizeof(float) * n * n);
  cudaMalloc(&d_m, sizeof(float) * n * n);
  int bs = BLOCK_SIZE_XY;
  dim3 b(bs, bs);
  dim3 g((n + bs - 1) / bs, (n + bs - 1) / bs);
  for (int t = 0; t < n - 1; ++t) {
    eliminate<<<g, b>>>(d_a, d_m, n, t);
  }
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
