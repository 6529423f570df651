#pragma once

#include "cuda_common.h"

// One warp per row: lanes stride through the row, a shuffle tree sums, lane 0 writes.
__global__ void row_mean_kernel(float *mean, const float *inp, int N, int C) {
  int lane = threadIdx.x % 32;
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (row >= N) return;
  const float *x = inp + row * C;
  float sum = 0.0f;
  for (int i = lane; i < C; i += 32) {
    sum += x[i];
  }
  for (int off = 16; off > 0; off /= 2) {
    sum += __shfl_down_sync(0xffffffff, sum, off);
  }
  if (lane == 0) {
    mean[row] = sum / C;
  }
}

void row_mean(float *mean, const float *inp, int N, int C) {
  const int block_size = 512;
  const int grid_size = CEIL_DIV(N * 32, block_size);
  row_mean_kernel<<<grid_size, block_size>>>(mean, inp, N, C);
}
