// I5: roots; pow kept for a general exponent.
__global__ void roots(const float *x, double *y, float *z, float p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float c = cbrtf(x[i]);
    double s = rsqrt((double)x[i]);
    float r = sqrtf(x[i]);
    float w = r * sqrtf(r);
    float g = powf(x[i], p);      // run-time exponent: pow is right
    float q = powf(x[i], 0.37f);  // no cheaper equivalent
    y[i] = s;
    z[i] = c + w + g + q;
}
