#define Z 0
__global__ void dz(float *a) { a[threadIdx.x / Z] = 1; a[threadIdx.x % Z] = 2; }
