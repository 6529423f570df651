// Kernels of our own for `cudalens analyze --run ... --counters` on the H100 (#14): every
// prediction checked against the counters of its own line's instructions (ncu's source page).
// extern "C" so that --run can launch them by name.

// The naive transpose: the store's stride is a kernel parameter (height), so the source model has
// no figure for it; the compiled model does (32 sectors/request for every plausible height).
extern "C" __global__ void transpose_naive(float *out, const float *in, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) out[x * height + y] = in[y * width + x];
}

// A tiled transpose whose column read of the tile is a 32-way bank conflict (tile[32][32], no pad).
extern "C" __global__ void transpose_tile_conflict(float *out, const float *in, int n) {
    __shared__ float tile[32][32];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
