// SH3: strided global loads whose block, taken together, reads whole rows: a shared-memory tile
// loaded coalesced would serve them (BPG 9.2.3.3).
#define TILE 32
#define WIDTH 64

// C = A A^T for an M x TILE matrix A, every factor read from global memory. The second factor
// walks down a column of A^T: lanes are TILE floats apart, a sector per lane, while the 32
// iterations of the loop read 32 whole rows of A.
__global__ void aat_global(const float *a, float *c, int m)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < TILE; i++) {
        sum += a[row * TILE + i] * a[col * TILE + i];  // expect: SH3
    }
    c[row * m + col] = sum;
}

// One thread per row sums that row of a row-major matrix: lanes are WIDTH floats apart.
__global__ void row_sums(const float *a, float *sums)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < WIDTH; k++) {
        s += a[row * WIDTH + k];  // expect: SH3
    }
    sums[row] = s;
}

// Naive transpose: the read walks a column of `in` (lanes n floats apart); the 8 warps of a
// 32 x 8 block read 8 neighbouring columns, i.e. one full sector per lane between them.
__global__ void transpose_naive(const float *in, float *out, int n)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * 8 + threadIdx.y;
    out[y * n + x] = in[x * n + y];  // expect: SH3
}

int main()
{
    float *a = 0, *c = 0, *s = 0;
    aat_global<<<dim3(4, 4), dim3(TILE, TILE)>>>(a, c, 128);
    row_sums<<<16, 256>>>(a, s);
    transpose_naive<<<dim3(32, 128), dim3(TILE, 8)>>>(a, c, 1024);
    return 0;
}
