// E6: kernels without __launch_bounds__.
__global__ void stencil(const float *in, float *out, int n)  // expect: E6
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) out[i] = in[i - 1] + in[i] + in[i + 1];
}

template <int B>
__global__ void tiled(const float *in, float *out)  // expect: E6
{
    out[blockIdx.x * B + threadIdx.x] = in[blockIdx.x * B + threadIdx.x];
}
