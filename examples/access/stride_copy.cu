// Copy where consecutive threads are `stride` elements apart (BPG 9.2.1.4). --define stride=S.
__global__ void stride_copy(float *dst, const float *src, int stride) {
  int k = (blockIdx.x * blockDim.x + threadIdx.x) * stride;
  dst[k] = src[k];
}
