// Two ways to split work between even and odd (BPG 12.1): per thread, and per warp.
__global__ void split_by_thread(float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x % 2 == 0) {
    out[t] = 1.0f;
  } else {
    out[t] = 2.0f;
  }
}

__global__ void split_by_warp(float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if ((threadIdx.x / 32) % 2 == 0) {
    out[t] = 1.0f;
  } else {
    out[t] = 2.0f;
  }
}
