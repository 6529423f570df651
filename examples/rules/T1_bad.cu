// T1: host timers read while the kernel may still run.
#include <chrono>
#include <ctime>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

double time_it(int n, const float *x, float *y)
{
    auto t0 = std::chrono::steady_clock::now();
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    auto t1 = std::chrono::steady_clock::now();  // expect: T1
    clock_t c0 = clock();
    for (int r = 0; r < 10; ++r) saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    clock_t c1 = clock();  // expect: T1
    return std::chrono::duration<double>(t1 - t0).count() + double(c1 - c0);
}
