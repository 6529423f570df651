// I1: shifts and masks; literal divisors are left to the compiler.
__global__ void bucket(const int *keys, int *out, int n, int log_buckets)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    int buckets = 1 << log_buckets;
    int tile = i / 32;      // literal: the compiler emits a shift
    int rest = i % 64;      // literal: the compiler emits a mask
    if (i < n) {
        out[i] = (keys[i] & (buckets - 1)) + lane + warp + tile + rest;
    }
}
