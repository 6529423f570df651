// Lab divergence (D1). Two different chains of dependent arithmetic (a float FMA chain and an
// integer linear-congruential chain, which the compiler cannot merge into one), chosen per
// thread by a condition that either splits every warp or whole warps.

__device__ float float_chain(float x, int n)
{
    for (int k = 0; k < n; k++) {
        x = fmaf(x, 0.999999f, 1.0e-6f);
    }
    return x;
}

__device__ float int_chain(unsigned u, int n)
{
    for (int k = 0; k < n; k++) {
        u = u * 1664525u + 1013904223u;
    }
    return (float)(u >> 8);
}

// Even and odd lanes take different paths: each warp runs both, one after the other.
__global__ void branch_lanes(float *out, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float r;
    if (threadIdx.x % 2 == 0) {
        r = float_chain((float)tid, n);
    } else {
        r = int_chain((unsigned)tid, n);
    }
    out[tid] = r;
}

// The same work, with the condition constant across each warp: no warp diverges.
__global__ void branch_warps(float *out, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float r;
    if ((threadIdx.x / 32) % 2 == 0) {
        r = float_chain((float)tid, n);
    } else {
        r = int_chain((unsigned)tid, n);
    }
    out[tid] = r;
}

// Both paths computed by every thread, then a select: what predication does. It costs the
// sum of both paths, like the divergent branch.
__global__ void branch_select(float *out, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a = float_chain((float)tid, n);
    float b = int_chain((unsigned)tid, n);
    out[tid] = (threadIdx.x % 2 == 0) ? a : b;
}
