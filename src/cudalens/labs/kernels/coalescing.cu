// Labs coalescing-offset (G2) and coalescing-stride (G3).
// Plain copies whose addresses are shifted or spread out, so that the number of 32-byte
// sectors each warp touches changes while the useful bytes stay the same.

// Copy with every index shifted by `offset` elements (4-byte floats): offsets that are not
// a multiple of 8 make each warp straddle one more 32-byte sector.
__global__ void offset_copy(float *out, const float *in, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + offset;
    out[i] = in[i];
}

// Copy where thread t touches element t*stride: a warp needs min(4*stride, 32) sectors
// for the same 128 useful bytes.
__global__ void stride_copy(float *out, const float *in, int stride)
{
    long long i = (long long)(blockIdx.x * blockDim.x + threadIdx.x) * stride;
    out[i] = in[i];
}

// Specimens with the offset/stride written as constants, for the static analyzer.
__global__ void copy_aligned(float *out, const float *in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

__global__ void copy_misaligned(float *out, const float *in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    out[i] = in[i];
}

__global__ void copy_stride2(float *out, const float *in)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 2;
    out[i] = in[i];
}
