// I10: trigonometric functions of pi times x.
#define MY_PI 3.14159265f

__global__ void wave(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = sinf(3.14159265f * x[i]);  // expect: I10
    float b = cos(2.0 * M_PI * x[i]);  // expect: I10
    float c = cosf(x[i] * MY_PI / 180.0f);  // expect: I10
    y[i] = a + b + c;
}
