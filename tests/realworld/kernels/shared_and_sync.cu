// Labelled real-world set: shared memory, barriers and divergence. Our own minimal reproductions
// of patterns in cuda-samples (reduction, transpose, scan, sortingNetworks), CUB and llm.c.
#include <cuda_runtime.h>

#define TILE 32
#define BLOCK 256

// reduction kernel 0 shape: interleaved addressing with a modulo test; most lanes of every warp idle.
__global__ void reduce_interleaved_mod(const float *in, float *out) {
    __shared__ float s[BLOCK];
    unsigned int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * BLOCK + tid];
    __syncthreads();
    for (int step = 1; step < BLOCK; step *= 2) {
        if (tid % (2 * step) == 0) s[tid] += s[tid + step];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// reduction kernel 1 shape: strided index into shared memory, bank conflicts grow with the step.
__global__ void reduce_interleaved_index(const float *in, float *out) {
    __shared__ float s[BLOCK];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * BLOCK + tid];
    __syncthreads();
    for (int step = 1; step < BLOCK; step *= 2) {
        int index = 2 * step * tid;
        if (index < BLOCK) s[index] += s[index + step];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// Warp-shuffle reduction (the guide's and CUB's): lane 0 and thread 0 guards are not a problem.
__global__ void reduce_shuffle(const float *in, float *out, int n) {
    __shared__ float partial[32];
    int tid = threadIdx.x;
    int lane = tid % 32;
    int warp = tid / 32;
    int i = blockIdx.x * blockDim.x + tid;
    float v = i < n ? in[i] : 0.0f;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffff, v, off);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
        for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffff, v, off);
        if (tid == 0) atomicAdd(out, v);
    }
}

// Shared-tile transpose without padding: the column read of the tile is a 32-way bank conflict.
__global__ void transpose_tile_unpadded(const float *in, float *out, int n) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// The same with the tile padded to 33 columns: nothing to fix.
__global__ void transpose_tile_padded(const float *in, float *out, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Tiled matrix multiply (cuda-samples matrixMul shape): the reference fix for the naive kernel.
__global__ void matmul_tiled(const float *A, const float *B, float *C, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < N / TILE; ++t) {
        As[ty][tx] = A[row * N + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * N + col] = acc;
}

// Block reduction with __launch_bounds__ taking a template parameter (CUB/CUTLASS style): the
// block holds 256 threads, so __syncthreads() is required; __syncwarp() would break it.
template <int BLOCK_THREADS>
__global__ void __launch_bounds__(BLOCK_THREADS) block_sum_bounded(const float *in, float *out) {
    __shared__ float s[BLOCK_THREADS];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * BLOCK_THREADS + tid];
    __syncthreads();
    for (int step = BLOCK_THREADS / 2; step > 0; step >>= 1) {
        if (tid < step) s[tid] += s[tid + step];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
template __global__ void block_sum_bounded<256>(const float *, float *);

// One warp stages and reads back its own slice, but synchronizes the whole block.
__global__ void warp_private_staging(const float *in, float *out) {
    __shared__ float s[BLOCK];
    int tid = threadIdx.x;
    if (tid < 32) {
        s[tid] = in[blockIdx.x * 32 + tid];
        __syncthreads();
        out[blockIdx.x * 32 + tid] = s[31 - tid];
    }
}

// Even/odd work split by lane parity: every warp runs both sides.
__global__ void even_odd_split(float *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (threadIdx.x % 2 == 0) data[i] = data[i] * 2.0f;
    else data[i] = data[i] + 1.0f;
}

// The same split by warp: every warp takes one side.
__global__ void warp_aligned_split(float *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if ((threadIdx.x / 32) % 2 == 0) data[i] = data[i] * 2.0f;
    else data[i] = data[i] + 1.0f;
}

// Constant-memory filter taps read by every lane at once (convolutionSeparable shape): a broadcast.
__constant__ float taps[17];
__global__ void conv_row_constant(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 8 || i >= n - 8) return;
    float acc = 0.0f;
    for (int k = -8; k <= 8; ++k) acc += in[i + k] * taps[8 + k];
    out[i] = acc;
}

// A per-lane lookup into constant memory: 32 distinct addresses per warp request, serialized.
__constant__ float lut[256];
__global__ void lut_per_lane(const unsigned char *codes, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = lut[threadIdx.x];
}

// Blelloch-style scan step on shared memory with a power-of-two stride: conflicts grow with it.
__global__ void scan_upsweep(float *data) {
    __shared__ float s[2 * BLOCK];
    int tid = threadIdx.x;
    s[2 * tid] = data[blockIdx.x * 2 * BLOCK + 2 * tid];
    s[2 * tid + 1] = data[blockIdx.x * 2 * BLOCK + 2 * tid + 1];
    int offset = 1;
    for (int d = BLOCK; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            s[bi] += s[ai];
        }
        offset *= 2;
    }
    __syncthreads();
    data[blockIdx.x * 2 * BLOCK + 2 * tid] = s[2 * tid];
}

// Histogram with shared atomics (cuda-samples histogram64 shape, simplified): nothing to fix here.
__global__ void histogram_shared(const unsigned char *in, unsigned int *bins, int n) {
    __shared__ unsigned int h[256];
    h[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&h[in[i]], 1u);
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}

void launch_shared(float *a, float *b, unsigned char *c, unsigned int *h, int n) {
    reduce_interleaved_mod<<<n / BLOCK, BLOCK>>>(a, b);
    reduce_interleaved_index<<<n / BLOCK, BLOCK>>>(a, b);
    reduce_shuffle<<<n / BLOCK, BLOCK>>>(a, b, n);
    transpose_tile_unpadded<<<dim3(64, 64), dim3(32, 8)>>>(a, b, 2048);
    transpose_tile_padded<<<dim3(64, 64), dim3(32, 8)>>>(a, b, 2048);
    matmul_tiled<<<dim3(64, 64), dim3(32, 32)>>>(a, b, a, 2048);
    block_sum_bounded<256><<<n / 256, 256>>>(a, b);
    warp_private_staging<<<n / 256, 256>>>(a, b);
    even_odd_split<<<n / 256, 256>>>(a, n);
    warp_aligned_split<<<n / 256, 256>>>(a, n);
    conv_row_constant<<<n / 256, 256>>>(a, b, n);
    lut_per_lane<<<n / 256, 256>>>(c, b, n);
    scan_upsweep<<<n / 512, BLOCK>>>(a);
    histogram_shared<<<1024, 256>>>(c, h, n);
}
