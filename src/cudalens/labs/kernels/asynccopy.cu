// Lab async-copy (SH4, CC >= 8.0). Each block stages copy_count * blockDim.x elements of
// ELEM_BYTES bytes from global into dynamic shared memory, either through registers
// (synchronous) or with cp.async, which writes shared memory without a register round trip.
#ifndef ELEM_BYTES
#define ELEM_BYTES 4
#endif
#if ELEM_BYTES == 4
typedef int elem_t;
#elif ELEM_BYTES == 8
typedef int2 elem_t;
#else
typedef int4 elem_t;
#endif

__device__ __forceinline__ int first_word(elem_t v)
{
#if ELEM_BYTES == 4
    return v;
#else
    return v.x;
#endif
}

__global__ void stage_sync(const elem_t *global, int *out, int copy_count)
{
    extern __shared__ __align__(16) unsigned char smem[];
    elem_t *shared = reinterpret_cast<elem_t *>(smem);
    const elem_t *src = global + (long long)blockIdx.x * blockDim.x * copy_count;
    for (int i = 0; i < copy_count; ++i) {
        shared[blockDim.x * i + threadIdx.x] = src[blockDim.x * i + threadIdx.x];
    }
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = first_word(shared[(blockIdx.x * 7) % (blockDim.x * copy_count)]);
}

__global__ void stage_async(const elem_t *global, int *out, int copy_count)
{
    extern __shared__ __align__(16) unsigned char smem[];
    elem_t *shared = reinterpret_cast<elem_t *>(smem);
    const elem_t *src = global + (long long)blockIdx.x * blockDim.x * copy_count;
    for (int i = 0; i < copy_count; ++i) {
        elem_t *dst = &shared[blockDim.x * i + threadIdx.x];
        unsigned saddr;
        asm volatile("{ .reg .u64 p; cvta.to.shared.u64 p, %1; cvt.u32.u64 %0, p; }"
                     : "=r"(saddr) : "l"(dst));
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;"
                     :: "r"(saddr), "l"(&src[blockDim.x * i + threadIdx.x]), "n"(ELEM_BYTES)
                     : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = first_word(shared[(blockIdx.x * 7) % (blockDim.x * copy_count)]);
}
