// Lab occupancy-sensitivity (E1, SH6, L2).

// Grid-stride copy. Bandwidth depends on how many loads are in flight per SM, i.e. on how
// many warps are resident. The dynamic shared memory it is launched with is not needed by
// the copy: it is there only to limit how many blocks fit on an SM.
__global__ void occ_copy(float *out, const float *in, long long n)
{
    extern __shared__ float reserve[];
    if (n < 0) reserve[threadIdx.x] = 0.0f;  // never true; keeps the array referenced
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = in[i];
    }
}

// A kernel that wants many registers: each thread keeps REG_WORDS loads in flight before
// combining them. Compiled as is, with -maxrregcount, and with __launch_bounds__.
#ifndef REG_WORDS
#define REG_WORDS 32
#endif

__device__ __forceinline__ void reg_body(float *out, const float *in, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (long long base = first; base + (REG_WORDS - 1) * stride < n; base += REG_WORDS * stride) {
        float v[REG_WORDS];
#pragma unroll
        for (int j = 0; j < REG_WORDS; j++) v[j] = in[base + j * stride];
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < REG_WORDS; j++) s = fmaf(s, 0.5f, v[j] * v[(j + 7) % REG_WORDS]);
#pragma unroll
        for (int j = 0; j < REG_WORDS; j++) out[base + j * stride] = v[j] + s;
    }
}

__global__ void reg_heavy(float *out, const float *in, long long n)
{
    reg_body(out, in, n);
}

__global__ void __launch_bounds__(256, 8) reg_bounded(float *out, const float *in, long long n)
{
    reg_body(out, in, n);
}
