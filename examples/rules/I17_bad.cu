// I17: pointer parameters that may alias.
__global__ void axpy(float a, const float *x, float *y, int n)  // expect: I17
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void scatter(const int *idx, const float *__restrict__ v, float *acc, int n)  // expect: I17
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&acc[idx[i]], v[i]);
}
