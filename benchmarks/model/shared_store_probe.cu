// Kernels for benchmarks/model/shared_store_probe.py (our own code). Block 32 x 32; every kernel stores
// one tile row per warp into shared memory and reads it back conflict-free.
#define T 32

// Stores values computed in registers: no global loads in flight beside the stores.
extern "C" __global__ void st_const(float* out)
{
    __shared__ float t[T][T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    t[ty][tx] = (float)(tx * ty + blockIdx.x);
    __syncthreads();
    out[((size_t)blockIdx.x * T + ty) * T + tx] = t[ty][T - 1 - tx];
}

// The tile load of C = AB: each stored value comes straight from a global load.
extern "C" __global__ void st_global(const float* __restrict__ in, float* out)
{
    __shared__ float t[T][T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const size_t g = ((size_t)blockIdx.x * T + ty) * T + tx;
    t[ty][tx] = in[g];
    __syncthreads();
    out[g] = t[ty][T - 1 - tx];
}

// Control with a real conflict: lanes store 2 words apart, two lanes per bank (2 wavefronts).
extern "C" __global__ void st_const_2way(float* out)
{
    __shared__ float t[T][2 * T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    t[ty][2 * tx] = (float)(tx * ty + blockIdx.x);
    __syncthreads();
    out[((size_t)blockIdx.x * T + ty) * T + tx] = t[ty][2 * (T - 1 - tx)];
}

// Control with a real conflict fed by global loads.
extern "C" __global__ void st_global_2way(const float* __restrict__ in, float* out)
{
    __shared__ float t[T][2 * T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const size_t g = ((size_t)blockIdx.x * T + ty) * T + tx;
    t[ty][2 * tx] = in[g];
    __syncthreads();
    out[g] = t[ty][2 * (T - 1 - tx)];
}
