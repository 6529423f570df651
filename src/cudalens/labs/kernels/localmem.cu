// Lab local-memory (L1). The same arithmetic on a per-thread array of LOCAL_WORDS floats:
// with a run-time loop bound the indices are not compile-time constants, the array cannot
// live in registers and goes to (cached, but off-chip) local memory; with a constant bound
// and full unrolling every index is a constant and the array lives in registers.
#ifndef LOCAL_WORDS
#define LOCAL_WORDS 32
#endif

__global__ void local_dynamic(float *out, int words, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a[LOCAL_WORDS];
    for (int j = 0; j < words; j++) a[j] = (float)(tid + j);
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        for (int j = 0; j < words; j++) {
            acc = fmaf(a[j], 0.999f, acc);
            a[j] += 1.0f;
        }
    }
    out[tid] = acc;
}

__global__ void local_registers(float *out, int words, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a[LOCAL_WORDS];
#pragma unroll
    for (int j = 0; j < LOCAL_WORDS; j++) a[j] = (float)(tid + j);
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
#pragma unroll
        for (int j = 0; j < LOCAL_WORDS; j++) {
            acc = fmaf(a[j], 0.999f, acc);
            a[j] += 1.0f;
        }
    }
    out[tid] = acc + (float)words * 0.0f;
}
