// I4: float constants; a double kernel; initializers converted at compile time.
__global__ void blend(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float h = 0.5;            // converted at compile time: no double arithmetic
    float x = h * a[i];
    float y = b[i] + 1.0e-3f;
    x *= 0.75f;
    if (x > 0.0) x = 0.0f;     // comparisons are not judged
    out[i] = x * (1.0f / 3.0f) + y;
}

__global__ void blend_double(const double *a, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 0.5 * a[i] + 1.0e-3;   // double on purpose
}
