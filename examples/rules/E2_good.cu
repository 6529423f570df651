// E2: multiples of 32 (2-D blocks included); sizes not known in the source are not judged.
#define THREADS 128

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

void run(float *d, int n, int block_from_occupancy_api)
{
    scale<<<(n + THREADS - 1) / THREADS, THREADS>>>(d, 2.0f, n);
    dim3 tile(32, 8);
    scale<<<64, tile>>>(d, 2.0f, n);
    scale<<<n / block_from_occupancy_api, block_from_occupancy_api>>>(d, 2.0f, n);
}
