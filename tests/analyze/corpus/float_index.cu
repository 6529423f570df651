__global__ void fi(float *a) { a[(int)(threadIdx.x * 1.5f)] = 1; }
