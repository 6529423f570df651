#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define check_cuda(call)                                                     \
  do {                                                                       \
    cudaError_t err_ = (call);                                               \
    if (err_ != cudaSuccess) {                                               \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      exit(EXIT_FAILURE);                                                    \
    }                                                                        \
  } while (0)

#define TILE_DIM 32
#define BLOCK_ROWS 8
