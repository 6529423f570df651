// Lab constant-memory (K1). A warp's reads of __constant__ memory are served at the rate of
// one address per cycle: reads of one address are broadcast, distinct addresses serialize.

#define CTABLE_WORDS 4096
__constant__ float ctable[CTABLE_WORDS];

// `spread` distinct addresses per warp: lane l reads word (k + (l % spread) * 129) mod 4096.
__global__ void const_read(float *out, int iters, int spread)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int lane_part = (threadIdx.x % 32) % spread;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        acc += ctable[(k + lane_part * 129) & (CTABLE_WORDS - 1)];
    }
    out[tid] = acc;
}

// Specimens for the static analyzer: one address per warp vs 32 distinct addresses.
__global__ void const_uniform(float *out, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        acc += ctable[k & (CTABLE_WORDS - 1)];
    }
    out[tid] = acc;
}

__global__ void const_divergent(float *out, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        acc += ctable[(k + threadIdx.x * 129) & (CTABLE_WORDS - 1)];
    }
    out[tid] = acc;
}
