// I8: small integer powers through pow().
__global__ void energy(const float *dx, const float *dy, float *e, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r2 = powf(dx[i], 2.0f) + powf(dy[i], 2);  // expect: I8, I8
    e[i] = pow(r2, 3.0);  // expect: I8
}
