#include <cstdio>
#include <cuda_runtime.h>

void run_sgemm_naive(int M, int N, int K, const float *A, const float *B, float *C);
void run_sgemm_coalesce(int M, int N, int K, const float *A, const float *B, float *C);

int main() {
  const int size = 4096;
  float *A, *B, *C;
  cudaMalloc(&A, sizeof(float) * size * size);
  cudaMalloc(&B, sizeof(float) * size * size);
  cudaMalloc(&C, sizeof(float) * size * size);
  run_sgemm_naive(size, size, size, A, B, C);
  run_sgemm_coalesce(size, size, size, A, B, C);
  cudaError_t err = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(err));
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  return 0;
}
