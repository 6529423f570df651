// Tile geometry shared by every kernel of the project.
#pragma once

#define TILE 32  // threads per tile side; the shared tiles below are TILE x TILE floats
constexpr int ROWS_PER_THREAD = 4;

// A templated kernel defined in the header: instantiated by src/scale.cu.
template <typename T, int BLOCK>
__global__ void scale_rows(T *data, T factor, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) data[i] *= factor;
}
