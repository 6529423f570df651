// Labelled real-world set: global-memory patterns. Our own minimal reproductions of patterns seen
// in public projects (cuda-samples, SGEMM_CUDA, llm.c, PyTorch-style elementwise code); not copies.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define WIDTH 1000
#define TILE 32

// SGEMM_CUDA kernel 1 shape: threadIdx.x walks rows, so A's row-major reads stride by K per lane.
__global__ void sgemm_naive_rows(int M, int N, int K, const float *A, const float *B, float *C) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < M && y < N) {
        float acc = 0.0f;
        for (int i = 0; i < K; ++i) acc += A[x * K + i] * B[i * N + y];
        C[x * N + y] = acc;
    }
}

// Naive transpose: the read is coalesced, the write strides by n elements per lane.
__global__ void transpose_naive(const float *in, float *out, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < n && y < n) out[x * n + y] = in[y * n + x];
}

// Stencil reading its right neighbour: each warp's span starts 4 bytes past a sector boundary.
__global__ void shift_copy(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) out[i] = in[i + 1];
}

// De-interleave: every other element, stride 2.
__global__ void take_even(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[2 * i];
}

// Loop-invariant re-read: scale[row] is the same address on every iteration, and the loop's store to
// out may alias it (no __restrict__), so the compiler must load it again each time.
__global__ void scaled_row_sum(const float *x, const float *scale, float *out, int n) {
    int row = blockIdx.x;
    for (int k = threadIdx.x; k < n; k += blockDim.x) out[row * n + k] = scale[row] * x[row * n + k];
}

// Pointer walking a column by increment (BLAS-style): the address changes every iteration.
__global__ void column_dot_ptr(const float *a, const float *b, float *out, int rows, int lda) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    const float *p = a + col;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r) {
        acc += *p * b[r];
        p += lda;
    }
    out[col] = acc;
}

// Comma update in the loop header (cuda-samples matrixMul style): the address advances with j.
__global__ void column_dot_comma(const float *a, float *out, int rows, int lda) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int r = 0, j = col; r < rows; ++r, j += lda) acc += a[j];
    out[col] = acc;
}

// 2-D image with a row width that is not a multiple of 32 elements, 16x16 blocks.
__global__ void brighten_image(const float *img, float *out) {
    int tx = blockIdx.x * blockDim.x + threadIdx.x;
    int ty = blockIdx.y * blockDim.y + threadIdx.y;
    if (tx < WIDTH) out[ty * WIDTH + tx] = img[ty * WIDTH + tx] * 1.5f;
}

// Grid-stride SAXPY (PyTorch/CUB elementwise style): nothing to fix.
__global__ void saxpy_grid_stride(int n, float a, const float *x, float *y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

// Column sums: consecutive lanes read consecutive columns of each row: coalesced, nothing to fix.
__global__ void column_sums(const float *m, float *sums, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r) acc += m[r * cols + c];
    sums[c] = acc;
}

// Naive matrix multiply with threadIdx.x on columns (SGEMM_CUDA kernel 2): coalesced, but each
// element of A and B is loaded by every thread of a block row/column: stage tiles in shared memory.
__global__ void matmul_naive_coalesced(const float *A, const float *B, float *C, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < N; ++k) acc += A[row * N + k] * B[k * N + col];
    C[row * N + col] = acc;
}

// Array of structs with a 12-byte element: each lane reads 4 bytes out of 12.
struct Particle { float x, y, z; };
__global__ void particle_x_shift(Particle *p, float dx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i].x += dx;
}

// Vectorized copy with float4 (llm.c style packed loads): nothing to fix.
__global__ void copy_float4(const float4 *in, float4 *out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = in[i];
}

// A local variable shadows a pointer parameter's name: the loop reads the shared tile.
__global__ void shadowed_tile_sum(const float *tile, float *out, int n) {
    __shared__ float buf[256];
    buf[threadIdx.x] = tile[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    float acc = 0.0f;
    {
        const float *tile = buf;
        for (int k = 0; k < 256; ++k) acc += tile[k];
    }
    out[blockIdx.x * 256 + threadIdx.x] = acc;
}

// Grid-wide total by one thread (cuda-samples reductionMultiBlockCG's last step): the loop variable
// `block` shadows a name of the kernel and the guard is a cooperative-groups rank.
__global__ void grid_total(float *partial, int nblocks) {
    cg::grid_group grid = cg::this_grid();
    if (grid.thread_rank() == 0) {
        for (int block = 1; block < nblocks; block++) partial[0] += partial[block];
    }
}

// Planar to interleaved RGB bytes (cuda-samples NV12toBGRandResize, image I/O code): each store has
// lane stride 3, but the three stores of a pixel fill each other's gaps.
__global__ void planar_to_rgb(const float *r, const float *g, const float *b, unsigned char *dst, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < n) {
        dst[x * 3 + 0] = (unsigned char)r[x];
        dst[x * 3 + 1] = (unsigned char)g[x];
        dst[x * 3 + 2] = (unsigned char)b[x];
    }
}

void launch_global(float *a, float *b, float *c, float4 *v, Particle *p, int n) {
    sgemm_naive_rows<<<dim3(64, 64), dim3(32, 32)>>>(2048, 2048, 2048, a, b, c);
    transpose_naive<<<dim3(64, 64), dim3(32, 8)>>>(a, b, 2048);
    shift_copy<<<(n + 255) / 256, 256>>>(a, b, n);
    take_even<<<(n + 255) / 256, 256>>>(a, b, n);
    scaled_row_sum<<<1024, 256>>>(a, b, c, n);
    column_dot_ptr<<<n / 256, 256>>>(a, b, c, 1024, n);
    column_dot_comma<<<n / 256, 256>>>(a, c, 1024, n);
    brighten_image<<<dim3(63, 1000), dim3(16, 16)>>>(a, b);
    saxpy_grid_stride<<<1024, 256>>>(n, 2.0f, a, b);
    column_sums<<<(n + 255) / 256, 256>>>(a, b, 1024, n);
    matmul_naive_coalesced<<<dim3(64, 64), dim3(32, 32)>>>(a, b, c, 2048);
    particle_x_shift<<<(n + 255) / 256, 256>>>(p, 1.0f, n);
    copy_float4<<<(n + 255) / 256, 256>>>(v, v + n, n);
    shadowed_tile_sum<<<n / 256, 256>>>(a, b, n);
    grid_total<<<n / 256, 256>>>(a, n / 256);
    planar_to_rgb<<<(n + 255) / 256, 256>>>(a, b, c, (unsigned char *)p, n);
}
