#ifdef USE_FAST
__global__ void f1(float *a) { a[threadIdx.x] = 1; }
#else
__global__ void f2(float *a) { a[threadIdx.x * 2] = 1; }
#endif
