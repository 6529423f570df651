#include <cstdio>
#include <cuda_runtime.h>

typedef void (*copy_fn)(float *, const float *, int);

__global__ void copy_unit(float *o, const float *i, int s) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  o[t] = i[t];
}

__global__ void copy_strided(float *o, const float *i, int s) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  o[t] = i[t * s];
}

static copy_fn kernels[] = {copy_unit, copy_strided};

void run_all(float *o, const float *i, int n) {
  for (int k = 0; k < 2; ++k) {
    kernels[k]<<<n / 256, 256>>>(o, i, 4);
    printf("kernel %d: %s\n", k, cudaGetErrorString(cudaGetLastError()));
  }
}

int main() {
  const int n = 1 << 20;
  float *d_o, *d_i;
  cudaMalloc(&d_o, sizeof(float) * n);
  cudaMalloc(&d_i, sizeof(float) * n * 4);
  run_all(d_o, d_i, n);
  cudaDeviceSynchronize();
  return 0;
}
