// I18: a block-wide barrier on every step of a reduction.
__global__ void reduce(const float *in, float *out)
{
    __shared__ float buf[256];
    int tid = threadIdx.x;
    buf[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {  // expect: I18
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = buf[0];
}
