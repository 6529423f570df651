// X1: the field goes over the bus on every time step.
#include <cstdlib>

__global__ void diffuse(const float *u, float *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) v[i] = u[i] + 0.25f * (u[i - 1] - 2.0f * u[i] + u[i + 1]);
}

int main()
{
    const int n = 1 << 20;
    size_t bytes = n * sizeof(float);
    float *h_u = (float *)malloc(bytes);
    float *d_u, *d_v;
    cudaMalloc(&d_u, bytes);
    cudaMalloc(&d_v, bytes);
    for (int step = 0; step < 1000; ++step) {
        cudaMemcpy(d_u, h_u, bytes, cudaMemcpyHostToDevice);  // expect: X1
        diffuse<<<n / 256, 256>>>(d_u, d_v, n);
        cudaMemcpy(h_u, d_v, bytes, cudaMemcpyDeviceToHost);  // expect: X1
    }
    cudaFree(d_u);
    cudaFree(d_v);
    free(h_u);
    return 0;
}
