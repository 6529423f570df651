// I7: one sincosf; sin and cos of different arguments are fine.
__global__ void rotate(float2 *p, const float *theta, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s, c;
    sincosf(theta[i], &s, &c);
    float2 q = p[i];
    float tilt = cosf(theta[i] * 0.5f) + sinf(theta[i] * 2.0f);
    p[i] = make_float2(c * q.x - s * q.y + tilt, s * q.x + c * q.y);
}
