#pragma once

// Helper of the kind cuda_utils.cuh / helper_math.h collect: reads the first of each pair.
__device__ inline float load_pair_first(const float *p, int i) {
  return p[2 * i];
}
