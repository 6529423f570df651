// Copy with a shifted index (BPG 9.2.1.3 experiment). Analyze with --define offset=K.
__global__ void offset_copy(float *dst, const float *src, int offset) {
  int k = blockIdx.x * blockDim.x + threadIdx.x + offset;
  dst[k] = src[k];
}
