// X4: staged copies and kernels on created streams, pinned host memory.
__global__ void work(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}

void stage(float *d, int n)
{
    const int streams = 4;
    int chunk = n / streams;
    float *h;
    cudaMallocHost(&h, n * sizeof(float));
    cudaStream_t s[streams];
    for (int k = 0; k < streams; ++k) cudaStreamCreate(&s[k]);
    for (int k = 0; k < streams; ++k) {
        int off = k * chunk;
        cudaMemcpyAsync(d + off, h + off, chunk * sizeof(float), cudaMemcpyHostToDevice, s[k]);
        work<<<chunk / 256, 256, 0, s[k]>>>(d + off, chunk);
        cudaMemcpyAsync(h + off, d + off, chunk * sizeof(float), cudaMemcpyDeviceToHost, s[k]);
    }
    cudaDeviceSynchronize();
    cudaFreeHost(h);
}
