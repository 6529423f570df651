extern "C" __global__ void ec(float *a) { a[threadIdx.x + 1] = 2; }
