// Lab math-intrinsics (I6, I11). Each thread evaluates a function `iters` times on arguments
// base + (tid + k) * step and writes the sum, so the loop is bound by the function itself.
// Compiled once as written and once with -use_fast_math (which maps sinf to __sinf).

__global__ void sin_accurate(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        acc += sinf(base + (float)(tid + k) * step);
    }
    out[tid] = acc;
}

__global__ void sin_intrinsic(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        acc += __sinf(base + (float)(tid + k) * step);
    }
    out[tid] = acc;
}

__global__ void exp_accurate(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        acc += expf(base + (float)(tid + k) * step);
    }
    out[tid] = acc;
}

__global__ void exp_intrinsic(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        acc += __expf(base + (float)(tid + k) * step);
    }
    out[tid] = acc;
}
