// Tiled transpose: the tile size comes from the project header (include/tiles/common.cuh),
// reached through the include path of the build (-I include).
#include "tiles/common.cuh"

__global__ void transpose(float *dst, const float *src, int w) {
  __shared__ float tile[TILE][TILE];  // no padding: the column read below conflicts
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = src[y * w + x];
  __syncthreads();
  int ox = blockIdx.y * TILE + threadIdx.x;
  int oy = blockIdx.x * TILE + threadIdx.y;
  dst[oy * w + ox] = tile[threadIdx.x][threadIdx.y];
}

void launch_transpose(float *dst, const float *src, int w) {
  transpose<<<dim3(w / TILE, w / TILE), dim3(TILE, TILE)>>>(dst, src, w);
}
