// Labs matmul-shared (SH2, G8) and transpose-bank-conflicts (SH1, SH3).
// A is an M x TILE_DIM matrix; B is TILE_DIM x N. Blocks are TILE_DIM x TILE_DIM threads and
// each thread computes one element of C.

#ifndef TILE_DIM
#define TILE_DIM 32
#endif

// C = AB, every operand read straight from global memory. A warp reads one element of A
// (the same for all 32 threads) per iteration, and B's tile is read again by every warp.
__global__ void ab_simple(const float *a, const float *b, float *c, int N)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) {
        sum += a[row * TILE_DIM + i] * b[i * N + col];
    }
    c[row * N + col] = sum;
}

// C = AB with the row of A staged in shared memory by a coalesced load. Only the warp that
// wrote a row reads it, so a warp barrier is enough.
__global__ void ab_tile_a(const float *a, const float *b, float *c, int N)
{
    __shared__ float aTile[TILE_DIM][TILE_DIM];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    __syncwarp();
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) {
        sum += aTile[threadIdx.y][i] * b[i * N + col];
    }
    c[row * N + col] = sum;
}

// C = AB with both tiles in shared memory: each element of B is read from global memory
// once per block instead of once per warp. Other warps read B's tile, so a block barrier.
__global__ void ab_tile_ab(const float *a, const float *b, float *c, int N)
{
    __shared__ float aTile[TILE_DIM][TILE_DIM];
    __shared__ float bTile[TILE_DIM][TILE_DIM];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    bTile[threadIdx.y][threadIdx.x] = b[threadIdx.y * N + col];
    __syncthreads();
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) {
        sum += aTile[threadIdx.y][i] * bTile[i][threadIdx.x];
    }
    c[row * N + col] = sum;
}

// C = A A^T read from global memory: the second factor walks down a column of A^T, so the
// 32 threads of a warp read addresses TILE_DIM floats apart (a strided access).
__global__ void aat_simple(const float *a, float *c, int M)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) {
        sum += a[row * TILE_DIM + i] * a[col * TILE_DIM + i];
    }
    c[row * M + col] = sum;
}

// C = A A^T with a coalesced load into a transposed shared tile. Reading
// transposedTile[i][threadIdx.x] walks a column of a 32-wide array: a 32-way bank conflict.
__global__ void aat_shared(const float *a, float *c, int M)
{
    __shared__ float aTile[TILE_DIM][TILE_DIM];
    __shared__ float transposedTile[TILE_DIM][TILE_DIM];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    transposedTile[threadIdx.x][threadIdx.y] =
        a[(blockIdx.x * blockDim.x + threadIdx.y) * TILE_DIM + threadIdx.x];
    __syncthreads();
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) {
        sum += aTile[threadIdx.y][i] * transposedTile[i][threadIdx.x];
    }
    c[row * M + col] = sum;
}

// Same as aat_shared with one padding column: consecutive rows start one bank apart, so a
// column of the tile spreads over all 32 banks.
__global__ void aat_padded(const float *a, float *c, int M)
{
    __shared__ float aTile[TILE_DIM][TILE_DIM];
    __shared__ float transposedTile[TILE_DIM][TILE_DIM + 1];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    aTile[threadIdx.y][threadIdx.x] = a[row * TILE_DIM + threadIdx.x];
    transposedTile[threadIdx.x][threadIdx.y] =
        a[(blockIdx.x * blockDim.x + threadIdx.y) * TILE_DIM + threadIdx.x];
    __syncthreads();
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++) {
        sum += aTile[threadIdx.y][i] * transposedTile[i][threadIdx.x];
    }
    c[row * M + col] = sum;
}
