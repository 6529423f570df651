__global__ void bo(float *a) { int i = (threadIdx.x << 1) | (threadIdx.x >> 4) ^ 3; a[i & 255] = 1; }
