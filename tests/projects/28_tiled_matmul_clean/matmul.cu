#include <cstdio>
#include <cuda_runtime.h>

// C = A * B with square tiles staged in shared memory; walks A by tile columns and B by tile rows.
template <int TILE>
__global__ void matmul_tiled(float *C, const float *A, const float *B, int wA, int wB) {
  int tx = threadIdx.x, ty = threadIdx.y;
  int aFirst = wA * TILE * blockIdx.y;
  int aLast = aFirst + wA - 1;
  int bFirst = TILE * blockIdx.x;
  float acc = 0.0f;
  for (int a = aFirst, b = bFirst; a <= aLast; a += TILE, b += TILE * wB) {
    __shared__ float sA[TILE][TILE];
    __shared__ float sB[TILE][TILE];
    sA[ty][tx] = A[a + wA * ty + tx];
    sB[ty][tx] = B[b + wB * ty + tx];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) {
      acc += sA[ty][k] * sB[k][tx];
    }
    __syncthreads();
  }
  C[wB * TILE * blockIdx.y + TILE * blockIdx.x + wB * ty + tx] = acc;
}

int main() {
  const int block_size = 32;
  const int wA = 1024, hA = 1024, wB = 1024;
  float *d_A, *d_B, *d_C;
  cudaMalloc(&d_A, sizeof(float) * wA * hA);
  cudaMalloc(&d_B, sizeof(float) * wB * wA);
  cudaMalloc(&d_C, sizeof(float) * wB * hA);
  dim3 threads(block_size, block_size);
  dim3 grid(wB / threads.x, hA / threads.y);
  matmul_tiled<block_size><<<grid, threads>>>(d_C, d_A, d_B, wA, wB);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
