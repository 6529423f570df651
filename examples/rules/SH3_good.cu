// SH3, done right or not applicable: tiles loaded coalesced, strides that are not column walks,
// strided reads whose neighbours nobody reads.
#define TILE 32
#define WIDTH 64

// C = A A^T with the column factor loaded coalesced into a transposed, padded shared tile.
__global__ void aat_tiled(const float *a, float *c, int m)
{
    __shared__ float rows[TILE][TILE];
    __shared__ float cols[TILE][TILE + 1];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    rows[threadIdx.y][threadIdx.x] = a[row * TILE + threadIdx.x];
    cols[threadIdx.x][threadIdx.y] = a[(blockIdx.x * blockDim.x + threadIdx.y) * TILE + threadIdx.x];
    __syncthreads();
    float sum = 0.0f;
    for (int i = 0; i < TILE; i++) {
        sum += rows[threadIdx.y][i] * cols[i][threadIdx.x];
    }
    c[row * m + col] = sum;
}

// Row sums through a tile: each warp loads 32 rows a 32-column slice at a time, coalesced.
__global__ void row_sums_tiled(const float *a, float *sums)
{
    __shared__ float t[TILE][TILE + 1];
    int row0 = blockIdx.x * TILE;
    float s = 0.0f;
    for (int k0 = 0; k0 < WIDTH; k0 += TILE) {
        for (int r = 0; r < TILE; r++) {
            t[r][threadIdx.x] = a[(row0 + r) * WIDTH + k0 + threadIdx.x];
        }
        __syncwarp();
        for (int k = 0; k < TILE; k++) {
            s += t[threadIdx.x][k];
        }
        __syncwarp();
    }
    sums[row0 + threadIdx.x] = s;
}

// The row factor is staged but the column factor is still read from global memory with stride
// TILE. The kernel already tiles `a`, so SH3 stays quiet (conservative); G3 still reports the stride.
__global__ void aat_row_tile(const float *a, float *c, int m)
{
    __shared__ float rows[TILE][TILE];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    rows[threadIdx.y][threadIdx.x] = a[row * TILE + threadIdx.x];
    __syncwarp();
    float sum = 0.0f;
    for (int i = 0; i < TILE; i++) {
        sum += rows[threadIdx.y][i] * a[col * TILE + i];
    }
    c[row * m + col] = sum;
}

// One element per row (the first column): strided, but the other elements of those rows are never
// read, so a tile would fetch the same sectors. Not SH3's case.
__global__ void first_column(const float *a, float *out)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    out[row] = a[row * WIDTH];
}

// Interleaved pairs (stride 2): G3's case, not a column walk.
__global__ void real_parts(const float *z, float *re)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    re[i] = z[2 * i];
}

int main()
{
    float *a = 0, *c = 0, *s = 0;
    aat_tiled<<<dim3(4, 4), dim3(TILE, TILE)>>>(a, c, 128);
    row_sums_tiled<<<16, TILE>>>(a, s);
    aat_row_tile<<<dim3(4, 4), dim3(TILE, TILE)>>>(a, c, 128);
    first_column<<<16, 256>>>(a, s);
    real_parts<<<16, 256>>>(a, s);
    return 0;
}
