// Y2: uses the GPU without checking that one exists.
__global__ void fill(float *x) { x[threadIdx.x] = 1.0f; }

int main()  // expect: Y2
{
    float *d;
    cudaMalloc(&d, 256 * sizeof(float));
    fill<<<1, 256>>>(d);
    cudaFree(d);
    return 0;
}
