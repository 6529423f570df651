#include <cstdio>
#include <cuda_runtime.h>

#include "particles.cuh"

__global__ void drift_x(Particle *p, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    p[i].x += p[i].vx * dt;
  }
}

int main() {
  const int n = 1 << 20;
  Particle *d_p;
  cudaMalloc(&d_p, sizeof(Particle) * n);
  drift_x<<<(n + 255) / 256, 256>>>(d_p, 0.01f, n);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
