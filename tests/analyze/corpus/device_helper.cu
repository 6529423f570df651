__device__ __forceinline__ int lane() { return threadIdx.x & 31; }
__device__ int twice(int v) { int w = v * 2; return w; }
__global__ void dh(float *a) { a[twice(lane())] = 1; }
