// Compiled only through main.cu, which includes it after common.h (BLOCK_SIZE).
__global__ void flip_kernel(const float *in, float *out, int w, int h) {
  int x = blockIdx.x * BLOCK_SIZE + threadIdx.x;
  int y = blockIdx.y * BLOCK_SIZE + threadIdx.y;
  if (x < w && y < h) {
    out[x * h + y] = in[y * w + x];
  }
}
