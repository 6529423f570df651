// saxpy: y = a*x + y, one element per thread, 256-thread blocks. extern "C" keeps the name unmangled,
// so the harness can launch it: cudalens analyze examples/saxpy.cu --run "saxpy --grid 65536 --block 256
// --arg int32=16777216 --arg float32=2 --arg float32[2^24] --arg float32[2^24]@inout" --counters
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t err_ = (call);                                                   \
    if (err_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

extern "C" __global__ void __launch_bounds__(256) saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  const int n = 1 << 24;
  const size_t bytes = n * sizeof(float);
  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  if (devices == 0) {
    fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  float *hx, *hy, *dx, *dy;
  CHECK(cudaMallocHost(&hx, bytes));
  CHECK(cudaMallocHost(&hy, bytes));
  for (int i = 0; i < n; ++i) { hx[i] = 1.0f; hy[i] = 2.0f; }
  CHECK(cudaMalloc(&dx, bytes));
  CHECK(cudaMalloc(&dy, bytes));
  CHECK(cudaMemcpy(dx, hx, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, hy, bytes, cudaMemcpyHostToDevice));
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  saxpy<<<blocks, threads>>>(n, 2.0f, dx, dy);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(hy, dy, bytes, cudaMemcpyDeviceToHost));
  float worst = 0.0f;
  for (int i = 0; i < n; ++i) worst = fmaxf(worst, fabsf(hy[i] - 4.0f));
  printf("max error: %g\n", worst);
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  CHECK(cudaFreeHost(hx));
  CHECK(cudaFreeHost(hy));
  return 0;
}
