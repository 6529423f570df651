// Constant memory read with a warp-uniform index and with a per-lane index (K1).
__constant__ float weights[64];

__global__ void uniform_weight(float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = weights[blockIdx.x % 64];
}

__global__ void per_lane_weight(float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = weights[threadIdx.x % 16];
}
