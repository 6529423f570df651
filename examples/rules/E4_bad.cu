// E4: fixed grids smaller than the SM count of the target (H100 SXM: 132 SMs for cc 9.0).
__global__ void sum(const float *x, float *out, int n)
{
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += x[i];
    atomicAdd(out, acc);
}

void run(const float *d, float *r, int n)
{
    sum<<<32, 256>>>(d, r, n);  // expect: E4
    dim3 grid(8, 8);
    sum<<<grid, 256>>>(d, r, n);  // expect: E4
}
