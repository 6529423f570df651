// Y1: errors nobody looks at.
__global__ void fill(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 1.0f; }

int main()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return 1;
    const int n = 1 << 20;
    float *d;
    cudaMalloc(&d, n * sizeof(float));  // expect: Y1
    fill<<<n / 256, 256>>>(d, n);  // expect: Y1
    cudaDeviceSynchronize();  // expect: Y1
    cudaFree(d);  // expect: Y1
    return 0;
}
