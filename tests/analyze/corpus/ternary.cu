__global__ void tn(float *a, int n) { int i = threadIdx.x < 16 ? threadIdx.x : threadIdx.x + 100; a[i] = 0; }
