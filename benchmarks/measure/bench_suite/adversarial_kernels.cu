// Adversarial kernels for the timing suite (our own code). Each one tries to look faster than it is.
__device__ unsigned long long adv_last_out;  // output pointer of the last completed call
__device__ int adv_calls;                     // completed calls

// The honest work: dst = 2 * src, one float4 per thread, grid-stride.
__device__ __forceinline__ void scale2(const float4* __restrict__ src, float4* __restrict__ dst, long long n4,
                                       long long step) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (long long)gridDim.x * blockDim.x) {
        if (step > 1 && (i % step) != 0) continue;
        float4 v = src[i];
        dst[i] = make_float4(2.f * v.x, 2.f * v.y, 2.f * v.z, 2.f * v.w);
    }
}

extern "C" __global__ void adv_copy(const float4* __restrict__ src, float4* __restrict__ dst, long long n4) {
    scale2(src, dst, n4, 1);
}

// Skips all work when called again with the output pointer of the last call.
extern "C" __global__ void adv_cached(const float4* __restrict__ src, float4* __restrict__ dst, long long n4) {
    if (adv_last_out == (unsigned long long)dst) return;
    scale2(src, dst, n4, 1);
}

// Right on the first call only: later calls do the first quarter of the work.
extern "C" __global__ void adv_first_only(const float4* __restrict__ src, float4* __restrict__ dst, long long n4) {
    scale2(src, dst, adv_calls > 0 ? n4 / 4 : n4, 1);
}

// Runs after the work (same stream): remembers the output pointer and counts calls.
extern "C" __global__ void adv_mark(float4* dst) {
    adv_last_out = (unsigned long long)dst;
    adv_calls += 1;
}

extern "C" __global__ void adv_reset() {
    adv_last_out = 0ull;
    adv_calls = 0;
}

// What the side-stream adversary leaves on the timed stream.
extern "C" __global__ void adv_token(float* p) {
    if (threadIdx.x == 1000000) p[0] = 0.f;
}

// The L2-resident adversary, bandwidth-bound: per-block sums of src with four independent 16-byte
// loads in flight per thread (a grid of a few blocks per SM, grid-stride). Called again in hot mode,
// its whole working set (a few to ~24 MB) is still in the 50 MB L2, and L2 serves it faster than
// HBM could: the time beats compulsory bytes / DRAM bandwidth.
extern "C" __global__ void adv_l2_sum(const float4* __restrict__ src, float* __restrict__ out, long long n4) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const float4 v0 = src[i], v1 = src[i + stride], v2 = src[i + 2 * stride], v3 = src[i + 3 * stride];
        a0 += (v0.x + v0.y) + (v0.z + v0.w);
        a1 += (v1.x + v1.y) + (v1.z + v1.w);
        a2 += (v2.x + v2.y) + (v2.z + v2.w);
        a3 += (v3.x + v3.y) + (v3.z + v3.w);
    }
    for (; i < n4; i += stride) {
        const float4 v = src[i];
        a0 += (v.x + v.y) + (v.z + v.w);
    }
    float acc = (a0 + a1) + (a2 + a3);
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ float part[32];
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) t += part[w];
        out[blockIdx.x] = t;
    }
}

// The aliased-batch adversary: per-block sums over a batch of `entries` inputs of n4 float4 each,
// entry e at src + e * entry_stride4. Benchmarked with entry_stride4 = 0 (every entry is the same
// buffer, as when a benchmark builds its batch by broadcasting one tensor), its claimed compulsory
// traffic is entries x the buffer, but after the first entry the reads hit L2.
extern "C" __global__ void adv_batch_sum(const float4* __restrict__ src, float* __restrict__ out, long long n4,
                                         int entries, long long entry_stride4) {
    const int entry = blockIdx.x % entries;
    const int parts = gridDim.x / entries;  // blocks per entry (the grid is a multiple of entries)
    const long long stride = (long long)parts * blockDim.x;
    const float4* __restrict__ p = src + entry * entry_stride4;
    long long i = (long long)(blockIdx.x / entries) * blockDim.x + threadIdx.x;
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const float4 v0 = p[i], v1 = p[i + stride], v2 = p[i + 2 * stride], v3 = p[i + 3 * stride];
        a0 += (v0.x + v0.y) + (v0.z + v0.w);
        a1 += (v1.x + v1.y) + (v1.z + v1.w);
        a2 += (v2.x + v2.y) + (v2.z + v2.w);
        a3 += (v3.x + v3.y) + (v3.z + v3.w);
    }
    for (; i < n4; i += stride) {
        const float4 v = p[i];
        a0 += (v.x + v.y) + (v.z + v.w);
    }
    float acc = (a0 + a1) + (a2 + a3);
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ float part[32];
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) t += part[w];
        out[blockIdx.x] = t;
    }
}
