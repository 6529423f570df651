// SH5: __syncwarp() for warp-private data; __syncthreads() where warps exchange data.
__global__ void warp_sum(const float *in, float *out)
{
    __shared__ float buf[32];
    buf[threadIdx.x] = in[blockIdx.x * 32 + threadIdx.x];
    __syncwarp();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int k = 0; k < 32; ++k) s += buf[k];
        out[blockIdx.x] = s;
    }
}

__global__ void block_sum(const float *in, float *out)
{
    __shared__ float buf[256];
    int tid = threadIdx.x;
    buf[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (int s = 128; s >= 32; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        buf[tid] += buf[tid + 16];
        __syncwarp();
        buf[tid] += buf[tid + 8];
    }
    if (tid == 0) out[blockIdx.x] = buf[0];
}

void run(const float *d, float *r, int n)
{
    warp_sum<<<n / 32, 32>>>(d, r);
    block_sum<<<n / 256, 256>>>(d, r);
}
