__global__ void la(float *a, int k) { float r[8]; for (int j = 0; j < 8; j++) r[j] = a[j]; a[threadIdx.x] = r[k]; }
