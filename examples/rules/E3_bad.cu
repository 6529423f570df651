// E3: blocks below 64 threads.
__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

void run(float *d, int n)
{
    scale<<<(n + 31) / 32, 32>>>(d, 2.0f, n);  // expect: E3
    dim3 b(4, 4);
    scale<<<n / 16, b>>>(d, 2.0f, n);  // expect: E3
}
