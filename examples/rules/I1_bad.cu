// I1: division and modulo by powers of two the compiler cannot see.
__global__ void bucket(const int *keys, int *out, int n, int log_buckets)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;  // expect: I1
    int warp = threadIdx.x / warpSize;  // expect: I1
    int buckets = 1 << log_buckets;
    if (i < n) {
        out[i] = keys[i] % buckets + lane + warp;  // expect: I1
    }
}
