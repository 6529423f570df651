#include <cstdio>
#include <cuda_runtime.h>

__inline__ __device__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
  return v;
}

__global__ void total(const float *in, float *out, int n) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    v += in[i];
  }
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

int main() {
  const int n = 1 << 24;
  float *d_in, *d_out;
  cudaMalloc(&d_in, sizeof(float) * n);
  cudaMalloc(&d_out, sizeof(float));
  cudaMemset(d_out, 0, sizeof(float));
  total<<<528, 256>>>(d_in, d_out, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
