__global__ void ni(float *a) { a[(int)threadIdx.x - 40] = 1; }
