__global__ void ra(float *a) { int i = threadIdx.x; i = i * 4; a[i] = 0; i += 1; a[i] = 1; }
