#pragma once

#include "cuda_common.h"

// Token plus position embedding, one thread per output element.
__global__ void encoder_forward_kernel(float *out, const int *inp, const float *wte, const float *wpe,
                                       int B, int T, int C) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int N = B * T * C;
  if (idx < N) {
    int bt = idx / C;
    int t = bt % T;
    int c = idx % C;
    int ix = inp[bt];
    out[idx] = wte[ix * C + c] + wpe[t * C + c];
  }
}

void encoder_forward(float *out, const int *inp, const float *wte, const float *wpe, int B, int T, int C) {
  const int N = B * T * C;
  const int block_size = 256;
  const int grid_size = CEIL_DIV(N, block_size);
  encoder_forward_kernel<<<grid_size, block_size>>>(out, inp, wte, wpe, B, T, C);
}
