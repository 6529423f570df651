// M1: allocation and release on every batch.
__global__ void work(float *tmp, int b) { tmp[threadIdx.x] = b; }

void run(int batches, size_t bytes)
{
    for (int b = 0; b < batches; ++b) {
        float *tmp;
        cudaMalloc(&tmp, bytes);  // expect: M1
        work<<<1, 256>>>(tmp, b);
        cudaFree(tmp);  // expect: M1
    }
    for (int r = 0; r < 100; ++r) {
        void *scratch;
        cudaMallocHost(&scratch, bytes);  // expect: M1
        cudaFreeHost(scratch);  // expect: M1
    }
}
