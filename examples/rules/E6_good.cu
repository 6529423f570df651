// E6: launch bounds on every kernel.
__global__ void __launch_bounds__(256) stencil(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) out[i] = in[i - 1] + in[i] + in[i + 1];
}

template <int B>
__global__ void __launch_bounds__(B, 2) tiled(const float *in, float *out)
{
    out[blockIdx.x * B + threadIdx.x] = in[blockIdx.x * B + threadIdx.x];
}
