#include <cstdio>
#include <cuda_runtime.h>

template <typename T>
__global__ void gather4(const T *in, T *out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = in[i * 4];
  }
}

template <typename T>
__global__ void scale_all(T *x, T a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    x[i] = a * x[i];
  }
}

int main() {
  const int n = 1 << 20;
  float *d_in, *d_out;
  cudaMalloc(&d_in, sizeof(float) * n * 4);
  cudaMalloc(&d_out, sizeof(float) * n);
  gather4<float><<<264, 256>>>(d_in, d_out, n);
  scale_all<float><<<264, 256>>>(d_out, 2.0f, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
