// A tiled single-precision matrix multiply, C = alpha * A * B + beta * C (row-major), whose tile
// sizes are template parameters: the block computes a BM x BN tile of C, stepping through K in
// slices of BK held in shared memory; each thread computes a TM x TN micro-tile in registers.
// Threads per block: (BM / TM) * (BN / TN). M, N and K must be multiples of BM, BN and BK; the
// tile loads need BM * BK and BK * BN to be multiples of the thread count (restrictions of the
// tuning space in benchmarks/tune/). Our own code, written for the cudalens tuner's benchmark.

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
gemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
     float beta, float* __restrict__ C)
{
    constexpr int THREADS = (BM / TM) * (BN / TN);
    __shared__ float As[BK][BM];  // the A slice, transposed: As[k][m]
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);
    const int ty = tid / (BN / TN);
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int r = 0; r < BM * BK / THREADS; ++r) {
            const int i = tid + r * THREADS;
            const int m = i / BK, k = i % BK;
            As[k][m] = A[(row0 + m) * K + k0 + k];
        }
#pragma unroll
        for (int r = 0; r < BK * BN / THREADS; ++r) {
            const int i = tid + r * THREADS;
            const int k = i / BN, n = i % BN;
            Bs[k][n] = B[(k0 + k) * N + col0 + n];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[k][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            float* c = &C[(row0 + ty * TM + i) * N + col0 + tx * TN + j];
            *c = alpha * acc[i][j] + beta * *c;
        }
}
