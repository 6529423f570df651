__global__ void er(const float *a, float *b, int n) { int i = threadIdx.x + blockIdx.x * blockDim.x; if (i >= n) return; b[i] = a[i]; }
