// I14: plain 32-bit multiplies.
__global__ void copy(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i * 2;
    if (j < n) out[j] = in[j];
}
