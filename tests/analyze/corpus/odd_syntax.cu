__global__ void od(float *a) { a[threadIdx.x] = ; if ( { } }
__global__ void ok(float *a) { a[threadIdx.x] = 1; }
