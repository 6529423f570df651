// M3: managed memory with neither prefetch nor advice.
__global__ void inc(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }

void run(int n)
{
    float *x;
    cudaMallocManaged(&x, n * sizeof(float));  // expect: M3
    for (int i = 0; i < n; ++i) x[i] = 0.0f;
    inc<<<(n + 255) / 256, 256>>>(x, n);
    cudaDeviceSynchronize();
    cudaFree(x);
}
