#include "mystuff.h"
__global__ void uc(float *a) { a[my_index(threadIdx.x)] = 1; a[threadIdx.x] = helper(a[0]); }
