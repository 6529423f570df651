// Kernels with known counter signatures, profiled once each under Nsight Compute to make the
// committed fixture tests/fixtures/ncu_h100_raw.csv. Our own code.
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void copy_coalesced(float* __restrict__ out, const float* __restrict__ in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
__global__ void copy_stride2(float* __restrict__ out, const float* __restrict__ in, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 2;
  if (i < n) out[i] = in[i];
}
__global__ void transpose_conflicts(float* __restrict__ out, const float* __restrict__ in, int w) {
  __shared__ float tile[32][32];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  out[y * w + x] = tile[threadIdx.x][threadIdx.y];
}
__global__ void transpose_padded(float* __restrict__ out, const float* __restrict__ in, int w) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  out[y * w + x] = tile[threadIdx.x][threadIdx.y];
}
__global__ void branch_odd_even(float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v;
  if (threadIdx.x % 2 == 0) v = sinf((float)i); else v = cosf((float)i);
  if (i < n) out[i] = v;
}
__global__ void branch_warp_aligned(float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v;
  if ((threadIdx.x / 32) % 2 == 0) v = sinf((float)i); else v = cosf((float)i);
  if (i < n) out[i] = v;
}

int main() {
  const int n = 1 << 24, w = 4096;
  float *a, *b;
  CHECK(cudaMalloc(&a, sizeof(float) * n));
  CHECK(cudaMalloc(&b, sizeof(float) * n));
  CHECK(cudaMemset(b, 0, sizeof(float) * n));
  copy_coalesced<<<n / 256, 256>>>(a, b, n);
  copy_stride2<<<n / 256, 256>>>(a, b, n);
  dim3 tb(32, 32), tg(w / 32, w / 32);
  transpose_conflicts<<<tg, tb>>>(a, b, w);
  transpose_padded<<<tg, tb>>>(a, b, w);
  branch_odd_even<<<n / 256, 256>>>(a, n);
  branch_warp_aligned<<<n / 256, 256>>>(a, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  std::printf("ok\n");
  return 0;
}
