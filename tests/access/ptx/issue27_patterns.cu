// Kernels of our own reproducing the patterns of issue 27 (held-out public code, compared line by line
// with H100 per-instruction counters), for the compiled access model's CPU tests
// (tests/access/test_ptx_issue27.py) and their GPU run (benchmarks/model/issue27_patterns_gpu.py, which
// launches each with the launch of benchmarks/model/issue27_patterns_gpu.py: PLAN). No main: extern "C"
// kernels only, loaded from a cubin built with -lineinfo.

// 1. A value chosen under a data-dependent branch with a break (a particle filter's resampling):
// `index` depends on the loaded cdf and u through control flow only (an implicit flow).
extern "C" __global__ void find_index(const double *arrayX, const double *cdf, const double *u, double *xj, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int index = -1;
        for (int x = 0; x < n; x++) {
            if (cdf[x] >= u[i]) {
                index = x;
                break;
            }
        }
        if (index == -1) index = n - 1;
        xj[i] = arrayX[index];  // chosen under a branch
    }
}

// 2. An index with a kernel parameter that nobody gives (backprop's layer forward): a 16 x 16 block,
// rows (hid + 1) floats apart; the sectors per request depend on hid's alignment.
extern "C" __global__ void hid_index(const float *input, float *output, int hid) {
    int by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int index = (hid + 1) * 16 * by + (hid + 1) * ty + tx + 1 + (hid + 1);
    output[index] = input[index] * 2.0f;  // hid index
}

// 3. Triangular loops over a shared 16 x 16 tile in a 16-thread block (LU decomposition's diagonal).
extern "C" __global__ void lud_diagonal(float *m, int matrix_dim, int offset) {
    __shared__ float shadow[16][16];
    int array_offset = offset * matrix_dim + offset;
    for (int i = 0; i < 16; i++) {
        shadow[i][threadIdx.x] = m[array_offset + threadIdx.x];  // tile load
        array_offset += matrix_dim;
    }
    __syncthreads();
    for (int i = 0; i < 15; i++) {
        if (threadIdx.x > i) {
            for (int j = 0; j < i; j++) shadow[threadIdx.x][i] -= shadow[threadIdx.x][j] * shadow[j][i];  // column
            shadow[threadIdx.x][i] /= shadow[i][i];  // divide
        }
        __syncthreads();
        if (threadIdx.x > i) {
            for (int j = 0; j < i + 1; j++) shadow[i + 1][threadIdx.x] -= shadow[i + 1][j] * shadow[j][threadIdx.x];  // row
        }
        __syncthreads();
    }
    array_offset = (offset + 1) * matrix_dim + offset;
    for (int i = 1; i < 16; i++) {
        m[array_offset + threadIdx.x] = shadow[i][threadIdx.x];  // tile store
        array_offset += matrix_dim;
    }
}

// 4. Short conditional shared accesses that ptxas predicates (@P LDS/STS): a warp whose lanes are
// all off still executes them, and Nsight Compute counts that execution.
extern "C" __global__ void predicated_shared(const float *in, float *out, int k) {
    __shared__ float sh[1024];
    int t = threadIdx.x;
    sh[t] = in[blockIdx.x * blockDim.x + t];  // plain store
    __syncthreads();
    float v = 0.f;
    if (t < k) v = sh[(t * 2) % 1024];  // predicated load
    if (t < k) sh[(t * 4) % 1024] = v;  // predicated store
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = sh[t] + v;
}

// 5./6. cuda-samples' SharedMemory<T> idiom (extern __shared__ behind a conversion operator) with
// reduce1's interleaved addressing: sdata[2 * s * tid] conflicts 2-way at s = 1, up to 16-way.
template <class T>
struct SharedMemory {
    __device__ inline operator T *() {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
    __device__ inline operator const T *() const {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};

extern "C" __global__ void reduce1(const float *g_idata, float *g_odata, unsigned int n) {
    float *sdata = SharedMemory<float>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;  // stage
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];  // interleaved
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];  // result
}

// 5. Shared memory reached through a reinterpret_cast of a dynamic shared byte array.
extern "C" __global__ void cast_shared(const float *in, float *out) {
    extern __shared__ unsigned char raw[];
    float *buf = reinterpret_cast<float *>(raw);
    unsigned int tid = threadIdx.x;
    buf[tid * 2] = in[blockIdx.x * blockDim.x + tid];  // cast store
    __syncthreads();
    out[blockIdx.x * blockDim.x + tid] = buf[(tid * 2) % 256];  // cast load
}

// 4. (data) A compare-and-swap in shared memory whose lanes the loaded data decide (a bitonic sort's
// step): ptxas predicates the swap; the model gives a range over the loaded values.
extern "C" __global__ void gated_swap(const float *in, float *out) {
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];  // swap stage
    __syncthreads();
    if (t < 128) {
        float a = s[t], b = s[t + 128];  // swap loads
        if (a > b) {
            s[t] = b;  // gated swap
            s[t + 128] = a;  // gated swap 2
        }
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[t];  // swap result
}

// 7. (session 8) A strided fill loop that ptxas unrolls, with a predicated copy (rodinia lavaMD's
// `while (wtx < NUMBER_PAR_PER_BOX) { rB_shared[wtx] = rB[wtx]; wtx += NUMBER_THREADS; }`: 100
// elements of 32 bytes, 128 threads): the unrolled copies and the predicated one never execute, so
// the line's N-way is that of the one pass every lane makes.
struct four_vector {
    double v, x, y, z;
};

extern "C" __global__ void unrolled_fill(const four_vector *g, double *out) {
    __shared__ four_vector s[100];
    int wtx = threadIdx.x;
    while (wtx < 100) {
        s[wtx] = g[wtx];  // unrolled fill
        wtx += 128;
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x % 100].x;  // fill read
}

// 8. (session 8) An 8-byte shared store under a bounds guard with a partial last warp (rodinia
// particlefilter's likelihood_kernel: n = 1000 over 2 x 512 threads): full warps take 2 wavefronts,
// the 8-lane warp 1, and ncu's N-way is the whole part of 63 / 32 over the grid: it prints 1.
extern "C" __global__ void edge_store(const double *w, double *out, int n) {
    __shared__ double buffer[512];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buffer[threadIdx.x] = 0.0;
    __syncthreads();
    if (i < n) buffer[threadIdx.x] = w[i];  // edge store
    __syncthreads();
    out[i] = buffer[threadIdx.x];
}

// 9. (session 8) rodinia srad_v2's east edge: in a 16 x 16 block each row's 16 lanes read one float
// (`C[cols * ty + 15]`), so a warp reads two floats a row apart: 2 sectors, and 2 is what Nsight
// Compute counts as ideal (the packed active lanes' bytes, but no more than the sectors touched).
extern "C" __global__ void row_edge(const float *c, float *out, int cols) {
    __shared__ float east[16][16];
    int tx = threadIdx.x, ty = threadIdx.y;
    east[ty][tx] = c[cols * ty + 15];  // row edge
    __syncthreads();
    out[ty * 16 + tx] = east[tx][ty];
}
