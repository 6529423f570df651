#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// Variant 1: reads a 32 x 1024 block column-wise.
__global__ void permute_v1(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[(i % 32) * 1024 + (i / 32) % 1024];
}

// Variant 2: 16-byte loads and stores.
__global__ void copy_v2(float4 *out, const float4 *in, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) out[i] = in[i];
}

void run_kernel(int kernel_num, float *out, const float *in, int n) {
  switch (kernel_num) {
    case 1:
      permute_v1<<<(n + 255) / 256, 256>>>(out, in, n);
      break;
    case 2:
      copy_v2<<<(n / 4 + 255) / 256, 256>>>((float4 *)out, (const float4 *)in, n / 4);
      break;
    default:
      fprintf(stderr, "unknown kernel %d\n", kernel_num);
      exit(1);
  }
}

int main(int argc, char **argv) {
  int kernel_num = argc > 1 ? atoi(argv[1]) : 1;
  const int n = 1 << 20;
  float *d_out, *d_in;
  cudaMalloc(&d_out, sizeof(float) * n);
  cudaMalloc(&d_in, sizeof(float) * n);
  run_kernel(kernel_num, d_out, d_in, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
