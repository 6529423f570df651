__global__ void ul(float *a, unsigned n) { for (unsigned i = threadIdx.x; i < n; i += 64u) a[i] = 0; }
