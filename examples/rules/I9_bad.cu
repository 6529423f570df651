// I9: powers of two and ten through pow().
__global__ void scales(const float *e, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = powf(2.0f, e[i]);  // expect: I9
    float b = pow(10, e[i]);  // expect: I9
    out[i] = a + b;
}
