// E2: block sizes that are not multiples of 32.
#define THREADS 100

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

void run(float *d, int n)
{
    scale<<<(n + THREADS - 1) / THREADS, THREADS>>>(d, 2.0f, n);  // expect: E2
    dim3 tile(10, 10);
    scale<<<64, tile>>>(d, 2.0f, n);  // expect: E2
}
