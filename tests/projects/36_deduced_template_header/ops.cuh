#pragma once

template <typename T>
__global__ void every_other(T *out, const T *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[2 * i];
}

template <typename T>
void launch_every_other(T *out, const T *in, int n) {
  every_other<<<(n + 127) / 128, 128>>>(out, in, n);
}
