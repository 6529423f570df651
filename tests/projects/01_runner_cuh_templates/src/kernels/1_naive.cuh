#pragma once

// One thread per output element; threadIdx.x walks rows of row-major A and C.
template <const int BM>
__global__ void sgemm_naive(int M, int N, int K, const float *A, const float *B, float *C) {
  const int row = blockIdx.x * BM + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int i = 0; i < K; ++i) {
      acc += A[row * K + i] * B[i * N + col];
    }
    C[row * N + col] = acc;
  }
}
