// I4: double constants in a float kernel.
__global__ void blend(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = 0.5 * a[i];  // expect: I4
    float y = b[i] + 1.0e-3;  // expect: I4
    x *= 0.75;  // expect: I4
    out[i] = x * (1.0 / 3.0) + y;  // expect: I4
}
