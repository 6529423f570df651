#include <cstdio>
#include <cuda_runtime.h>

extern "C" void run_pick(const float *rec, float *out, int n, int fields);

int main() {
  const int n = 1 << 20;
  const int fields = 3;
  float *d_rec, *d_out;
  cudaMalloc(&d_rec, sizeof(float) * n * fields);
  cudaMalloc(&d_out, sizeof(float) * n);
  run_pick(d_rec, d_out, n, fields);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
