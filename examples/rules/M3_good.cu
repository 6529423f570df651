// M3: prefetch to the device before the kernel, advise read-mostly data.
__global__ void inc(float *x, const float *w, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += w[i]; }

void run(int n, cudaStream_t s, cudaMemLocation dev_loc, cudaMemLocation host_loc)
{
    float *x, *w;
    cudaMallocManaged(&x, n * sizeof(float));
    cudaMallocManaged(&w, n * sizeof(float));
    for (int i = 0; i < n; ++i) { x[i] = 0.0f; w[i] = 1.0f; }
    cudaMemAdvise(w, n * sizeof(float), cudaMemAdviseSetReadMostly, dev_loc);
    cudaMemPrefetchAsync(x, n * sizeof(float), dev_loc, 0, s);
    inc<<<(n + 255) / 256, 256, 0, s>>>(x, w, n);
    cudaMemPrefetchAsync(x, n * sizeof(float), host_loc, 0, s);
    cudaStreamSynchronize(s);
}
