__global__ void at(int *hist, const unsigned char *d, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(&hist[d[i]], 1); }
