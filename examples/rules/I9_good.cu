// I9: exp2f / exp10f; constant powers are folded by the compiler.
__global__ void scales(const float *e, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = exp2f(e[i]);
    float b = exp10f(e[i]);
    float c = powf(2.0f, 3.0f);
    float d = powf(e[i], 2.5f);
    out[i] = a + b + c + d;
}
