// Kernels for benchmarks/measure/measure_gpu.py and the GPU tests of cudalens.measure (our own code).
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

// 16-byte vectorized copy, grid-stride; n4 = number of float4 elements.
extern "C" __global__ void copy_f4(const float4* __restrict__ src, float4* __restrict__ dst, long long n4)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) dst[i] = src[i];
}

// Compute bound: a dependent FMA chain of `iters` steps per thread.
extern "C" __global__ void compute_loop(float* out, int iters)
{
    float v = threadIdx.x * 1e-3f, w = 0.999f;
    for (int k = 0; k < iters; ++k) v = fmaf(v, w, 1e-4f);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Faults on purpose: writes through a pointer into unmapped memory.
extern "C" __global__ void fault(float* p)
{
    float* bad = (float*)(0x10ULL + (unsigned long long)threadIdx.x * 4);
    bad[0] = p ? 1.0f : 2.0f;
}

// Hangs on purpose: spins on a flag that nobody sets.
extern "C" __global__ void spin(volatile int* flag)
{
    while (flag[0] == 0) { }
}

// Does nothing: what a timer reports for it is the timer's own floor.
extern "C" __global__ void empty_kernel() {}
