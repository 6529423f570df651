// Kernels of our own reproducing patterns met in public code (benchmarks/results/h100/realworld/),
// for the compiled access model's CPU tests (tests/access/test_ptx_realworld_patterns.py).

// 16-byte shared loads where each address is read by lanes 4 apart (lane % 4), as in a warp-tiled
// GEMM's register tile of B: 4 distinct 16-byte chunks, 64 bytes. Measured on the H100: N-way 4.
__global__ void wide_lane_mod4(float *out) {
    __shared__ float4 tile[64];
    tile[threadIdx.x % 64] = make_float4(threadIdx.x, 0.f, 0.f, 0.f);
    __syncthreads();
    float4 v = tile[threadIdx.x % 4];  // lane % 4
    out[blockIdx.x * blockDim.x + threadIdx.x] = v.x + v.y + v.z + v.w;
}

// 8-byte shared stores, 8 distinct addresses repeated every 8 lanes (a block of 8 x 8 x 4 threads
// indexing by threadIdx.x), as in a Jacobi solver's staging: 2 wavefronts.
__global__ void wide_tid_mod8(const double *x, double *out) {
    __shared__ double xs[64];
    xs[threadIdx.x] = x[threadIdx.x];  // tid.x % 8 per lane
    __syncthreads();
    out[threadIdx.x + 8 * (threadIdx.y + 8 * threadIdx.z)] = xs[(threadIdx.x + 1) % 8];
}

// One shared load instruction run with stride 1 then stride 2 (1 and 2 wavefronts): 1.5 wavefronts
// per request, which Nsight Compute prints as N-way 1 (the whole part per instruction).
__global__ void mixed_stride(float *out, int n) {
    __shared__ float sh[2048];
    for (int i = threadIdx.x; i < 2048; i += blockDim.x) sh[i] = i;
    __syncthreads();
    float acc = 0.f;
#pragma unroll 1
    for (int s = 1; s <= n; s *= 2) {
        acc += sh[threadIdx.x * s];  // mixed
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// A stride loaded from memory, the same for every lane (warp-uniform): the sectors depend on its
// value, so the model answers with the range over its trial values (zero: every lane reads one word).
__global__ void loaded_stride(const int *strides, const float *in, float *out) {
    int s = strides[0];
    out[blockIdx.x * blockDim.x + threadIdx.x] = in[threadIdx.x * s];  // loaded stride
}

// A long loop before a store: with a small step budget the loop is cut early and the store after
// it is still evaluated.
__global__ void long_loop_then_store(const float *in, float *out, int n) {
    float acc = 0.f;
#pragma unroll 1
    for (int k = 0; k < n; ++k) {
        acc += in[k * 32 + threadIdx.x];  // loop body
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;  // after the loop
}

// A store reached only when a per-lane loaded flag says so: unreached by the evaluated warps
// because of data, and the reason says which.
__global__ void gated_by_loaded_flag(const int *flags, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (flags[i] == 12345) {
        out[i * 32] = 1.f;  // gated store
    }
}

// A branch on a per-lane loaded value around a loop; the store after the branch runs for every lane
// (the branch's immediate postdominator), so its figure does not depend on the data.
__global__ void after_a_loaded_branch(const int *flags, const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.f;
    if (flags[i] > 30) {
        for (int k = 0; k < n; ++k) {
            v += in[k * 64 + i];  // inside the branch
        }
    }
    out[i] = v;  // after the branch
}

// (The kernels from here on are extern "C" so that `cudalens analyze --run` can launch them by name:
// benchmarks/model/analyze/run_h100_patterns.sh checks them against the H100's per-instruction counters.)

// A pointer to a shared buffer published through shared memory (cuda-samples' newdelete does this
// with placement new): nvcc converts the shared address to a generic one inside a scoped block
// `{ .reg .b64 %tmp; cvt.u64.u32 ...; cvta.shared.u64 ...; }` that shares its line with the next
// statement. One lane stores the 8-byte pointer: 1 wavefront.
extern "C" __global__ void shared_pointer_published(float *out) {
    __shared__ float buf[256];
    __shared__ float *volatile published;  // volatile: the compiler keeps the store and the load
    buf[threadIdx.x] = threadIdx.x;
    if (threadIdx.x == 0) {
        published = buf;  // publish
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = published[threadIdx.x ^ 1u];
}

// Warp-aggregated work as warpAggregatedAtomicsCG does it: lanes holding the same key find each
// other with __match_any_sync and the lowest lane of each group writes. key = lane / 8: 4 groups
// per warp, 4 leaders, each 32 floats apart: 4 sectors per request.
extern "C" __global__ void match_groups(float *out) {
    unsigned key = (threadIdx.x & 31u) / 8u;
    unsigned peers = __match_any_sync(0xffffffffu, key);
    int leader = __ffs(peers) - 1;
    if ((int)(threadIdx.x & 31u) == leader) {
        out[(blockIdx.x * 4u + key) * 32u] = __popc(peers);  // leader store
    }
}

// A warp reduction (redux.sync) deciding a stride: half the lanes are odd, so the sum is 16 and
// consecutive lanes' floats are 16 apart: one sector per lane, 32 per request.
extern "C" __global__ void redux_stride(float *out) {
    unsigned s = __reduce_add_sync(0xffffffffu, threadIdx.x & 1u);
    out[(blockIdx.x * blockDim.x + threadIdx.x) * s] = 1.f;  // strided by the reduction
}

// A virtual call on an object built with placement new in shared memory (cuda-samples' newdelete):
// the callee is reached through the table pointer loaded from the object, so its access is data-
// dependent and the null names the load.
#include <new>
struct Shape {
    __device__ virtual float area(const float *v, unsigned i) const = 0;
};
struct Square : Shape {
    __device__ float area(const float *v, unsigned i) const override {
        return v[i * 32u] * v[i * 32u];  // virtual body
    }
};
extern "C" __global__ void virtual_call(const float *v, float *out) {
    __shared__ __align__(8) unsigned char storage[sizeof(Square)];
    __shared__ Shape *shape;
    if (threadIdx.x == 0) {
        shape = new (storage) Square();
    }
    __syncthreads();
    out[threadIdx.x] = shape->area(v, threadIdx.x);
}

// A helper with two shared loads of different strides inlined at one call (bitonicSort's
// Comparator): per call site the model keeps the lowest and the highest figure of one instruction
// (stride 1: 1 wavefront, stride 2: 2), the bounds of whatever part of it ptxas places at the call.
__device__ __forceinline__ float two_strides(const float *s, unsigned t) {
    return s[t] + s[t * 2u];  // helper loads
}
extern "C" __global__ void helper_two_strides(float *out) {
    __shared__ float s[512];
    s[threadIdx.x] = threadIdx.x;
    s[threadIdx.x + 256u] = 0.f;
    __syncthreads();
    out[threadIdx.x] = two_strides(s, threadIdx.x);  // helper call
}

// A load all lanes of a warp make at one address (llm.c's matmul_forward_kernel1: bias[oc]): 1
// sector per request, and Nsight Compute's ideal is 1 sector too (lanes reading one address count
// once), so sectors over ideal is 1, not 1/4.
extern "C" __global__ void broadcast_bias(const float *bias, float *out) {
    float b = bias != nullptr ? bias[blockIdx.y] : 0.f;  // broadcast
    out[(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x] = b;
}
