#pragma once

// The same product with a 1-D block: consecutive threads take consecutive columns.
template <const int TILE>
__global__ void sgemm_coalesce(int M, int N, int K, const float *A, const float *B, float *C) {
  const int row = blockIdx.x * TILE + (threadIdx.x / TILE);
  const int col = blockIdx.y * TILE + (threadIdx.x % TILE);
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int i = 0; i < K; ++i) {
      acc += A[row * K + i] * B[i * N + col];
    }
    C[row * N + col] = acc;
  }
}
