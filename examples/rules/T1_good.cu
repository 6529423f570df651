// T1: synchronize before the host timer, or time with events.
#include <chrono>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

double time_it(int n, const float *x, float *y)
{
    auto t0 = std::chrono::steady_clock::now();
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    cudaDeviceSynchronize();
    auto t1 = std::chrono::steady_clock::now();

    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    return std::chrono::duration<double>(t1 - t0).count() + ms;
}
