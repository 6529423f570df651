#pragma once

// Each thread scales the first of VEC consecutive elements.
template <typename T, int VEC>
__global__ void head_scale(T *x, T a, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (i < n) x[i] = a * x[i];
}
