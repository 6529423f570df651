// E3: 128 and 256 threads per block.
__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

void run(float *d, int n)
{
    scale<<<(n + 127) / 128, 128>>>(d, 2.0f, n);
    dim3 b(16, 16);
    scale<<<n / 256, b>>>(d, 2.0f, n);
}
