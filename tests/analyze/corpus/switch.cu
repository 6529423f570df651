__global__ void sw(float *a, int mode) { switch (mode) { case 0: a[threadIdx.x] = 0; break; default: a[threadIdx.x * 3] = 1; } }
