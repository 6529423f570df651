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

// Read-only: per-block sums of src (the L2-resident adversary: 16 MB fit in the H100's 50 MB L2).
extern "C" __global__ void adv_sum(const float4* __restrict__ src, float* __restrict__ out, long long n4) {
    float acc = 0.f;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (long long)gridDim.x * blockDim.x) {
        float4 v = src[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
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
