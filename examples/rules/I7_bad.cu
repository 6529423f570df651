// I7: sine and cosine of one argument.
__global__ void rotate(float2 *p, const float *theta, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float c = cosf(theta[i]);  // expect: I7
    float s = sinf(theta[ i ]);
    float2 q = p[i];
    p[i] = make_float2(c * q.x - s * q.y, s * q.x + c * q.y);
}
