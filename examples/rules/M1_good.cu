// M1: allocate once; set-up loops and stream-ordered pools are fine.
__global__ void work(float *tmp, int b) { tmp[threadIdx.x] = b; }

void run(int batches, size_t bytes, cudaStream_t s)
{
    float *tmp;
    cudaMalloc(&tmp, bytes);
    for (int b = 0; b < batches; ++b) work<<<1, 256>>>(tmp, b);
    cudaFree(tmp);

    float *per_stream[4];
    for (int k = 0; k < 4; ++k) cudaMalloc(&per_stream[k], bytes);   // set-up loop: allocates only

    for (int b = 0; b < batches; ++b) {
        float *pooled;
        cudaMallocAsync(&pooled, bytes, s);
        work<<<1, 256, 0, s>>>(pooled, b);
        cudaFreeAsync(pooled, s);
    }
    for (int k = 0; k < 4; ++k) cudaFree(per_stream[k]);
}
