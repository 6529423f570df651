// I14: legacy 24-bit multiplies.
__global__ void copy(const float *in, float *out, int n)
{
    int i = __mul24(blockIdx.x, blockDim.x) + threadIdx.x;  // expect: I14
    unsigned int j = __umul24(i, 2u);  // expect: I14
    if (j < n) out[j] = in[j];
}
