// I18: warp shuffles inside each warp, one barrier outside any loop.
__global__ void reduce(const float *in, float *out)
{
    __shared__ float partial[8];
    int tid = threadIdx.x;
    float v = in[blockIdx.x * 256 + tid];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((tid & 31) == 0) partial[tid >> 5] = v;
    __syncthreads();
    if (tid < 32) {
        v = tid < 8 ? partial[tid] : 0.0f;
        for (int o = 4; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (tid == 0) out[blockIdx.x] = v;
    }
}
