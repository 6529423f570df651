// Labs overlap-streams (X4) and zero-copy (X5).

// Element-wise work on n elements starting at data + offset: `iters` dependent FMAs per
// element, so its run time can be tuned to match the transfer time.
__global__ void chunk_work(float *data, long long offset, long long n, int iters)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = data[offset + i];
    for (int k = 0; k < iters; k++) {
        x = fmaf(x, 0.999999f, 1.0e-6f);
    }
    data[offset + i] = x;
}

// Reads each input element once, coalesced (the pattern for which mapped host memory is
// suitable), and writes a result to device memory. `in` is either device memory or a device
// pointer to mapped pinned host memory.
__global__ void read_once(float *out, const float *in, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}
