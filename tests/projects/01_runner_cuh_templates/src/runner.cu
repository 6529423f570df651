#include <cuda_runtime.h>

#include "kernels.cuh"

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

void run_sgemm_naive(int M, int N, int K, const float *A, const float *B, float *C) {
  dim3 gridDim(CEIL_DIV(M, 32), CEIL_DIV(N, 32));
  dim3 blockDim(32, 32);
  sgemm_naive<32><<<gridDim, blockDim>>>(M, N, K, A, B, C);
}

void run_sgemm_coalesce(int M, int N, int K, const float *A, const float *B, float *C) {
  dim3 gridDim(CEIL_DIV(M, 32), CEIL_DIV(N, 32));
  dim3 blockDim(32 * 32);
  sgemm_coalesce<32><<<gridDim, blockDim>>>(M, N, K, A, B, C);
}
