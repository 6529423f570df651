// I5: fractional constant powers through pow().
__global__ void roots(const float *x, double *y, float *z, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float c = powf(x[i], 1.0f / 3.0f);  // expect: I5
    double s = pow((double)x[i], -0.5);  // expect: I5
    float w = powf(x[i], 0.75f);  // expect: I5
    float bug = powf(x[i], 1 / 3);  // expect: I5
    y[i] = s;
    z[i] = c + w + bug;
}
