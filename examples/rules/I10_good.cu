// I10: sinpif / cospi; trig of other arguments.
__global__ void wave(const float *x, float *y, float w, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = sinpif(x[i]);
    float b = cospi(2.0 * x[i]);
    float c = cosf(w * x[i]);
    float d = sinf(3.0f * x[i]);
    y[i] = a + b + c + d;
}
