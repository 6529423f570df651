#include <cstdio>
#include <cuda_runtime.h>

template <class T>
void reduce(int size, int threads, int blocks, int whichKernel, T *d_in, T *d_out);

int main() {
  int size = 1 << 24;
  int threads = 256;
  int blocks = (size + threads - 1) / threads;
  float *d_in, *d_out;
  cudaMalloc(&d_in, sizeof(float) * size);
  cudaMalloc(&d_out, sizeof(float) * blocks);
  for (int kernel = 0; kernel < 2; ++kernel) {
    reduce<float>(size, threads, blocks, kernel, d_in, d_out);
    printf("kernel %d: %s\n", kernel, cudaGetErrorString(cudaDeviceSynchronize()));
  }
  return 0;
}
