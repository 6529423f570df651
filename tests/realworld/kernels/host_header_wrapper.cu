// Host pattern (cuda-samples style): launches checked by a wrapper defined in a header this file
// includes but the analysis does not see (getLastCudaError from helper_cuda.h); a later launch in
// the same function is left unchecked.
#include <cuda_runtime.h>
#include "project_helpers.h"

__global__ void twice(float *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] *= 2.0f;
}

void run_twice(float *d, int n) {
    twice<<<(n + 255) / 256, 256>>>(d, n);
    getLastCudaError("twice failed");
    twice<<<(n + 255) / 256, 256>>>(d, n);
    printf("launched\n");
}
