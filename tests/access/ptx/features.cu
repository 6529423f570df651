// Kernels of our own for the compiled (PTX) access model: one per feature the source model could not
// see. The expected numbers (per warp request) are in tests/access/test_ptx_eval.py; the same file was
// profiled on the H100 (tests/fixtures/ncu_source_h100_features.*.csv).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// 1. templated kernel: stride is a template value parameter
template <int S>
__global__ void tmpl_stride(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i * S];  // S = 2: 8 sectors/request; S = 32: 32
}
template __global__ void tmpl_stride<2>(const float *, float *);
template __global__ void tmpl_stride<32>(const float *, float *);

// 2. access inside a __device__ helper (inlined)
__device__ __forceinline__ float load_at(const float *p, int i) {
  return p[i];  // helper line: 4 sectors/request with the coalesced caller below
}
__global__ void helper_caller(const float *in, float *out, int pitch) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = load_at(in, i) + load_at(in, i * pitch);  // second call: pitch 256 -> 32 sectors
}

// 3. float4 loads and stores (128-bit)
__global__ void vec4_copy(const float4 *in, float4 *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i];  // 16 sectors/request
}

// 4. pointer increment in a loop (A += BK), iteration-invariant pattern
template <int BK>
__global__ void ptr_increment(const float *A, float *C, int K) {
  float acc = 0.f;
  A += threadIdx.x;
  for (int k = 0; k < K; k += BK) {
    acc += A[0];  // 4 sectors/request, every iteration
    A += BK * 32;
  }
  C[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
template __global__ void ptr_increment<8>(const float *, float *, int);

// 5. extern dynamic shared buffer with a 2-way conflict (stride 2 words)
__global__ void extern_shared(const float *in, float *out) {
  extern __shared__ float buf[];
  int t = threadIdx.x;
  buf[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = buf[(2 * t) % blockDim.x];  // 2 wavefronts/request
}

// 6. cooperative groups: thread_rank() of a 2-D block, column-major read
__global__ void cg_rank(const float *in, float *out, int ld) {
  cg::thread_block b = cg::this_thread_block();
  unsigned r = b.thread_rank();
  out[blockIdx.x * b.size() + r] = in[r * ld];  // ld = 256: 32 sectors/request
}

// 7. warp-uniform loaded index: idx loaded once per block, lanes affine in c
__global__ void uniform_index(const int *rows, const float *table, float *out, int C) {
  int idx = rows[blockIdx.x];
  int c = threadIdx.x;
  out[blockIdx.x * blockDim.x + c] = table[idx * C + c];  // 4 sectors/request (C multiple of 32)
}

// 8. divergence: half of each warp takes the branch (survives predication: a loop inside)
__global__ void divergent(float *out, int n) {
  int t = threadIdx.x;
  float v = 0.f;
  if (t % 32 < 16) {
    for (int k = 0; k < n; ++k) v += out[k * blockDim.x + t];
  }
  out[blockIdx.x * blockDim.x + t] = v;
}

// 9. shared tile transpose without padding: 32-way conflicts on the column read
__global__ void transpose_naive_tile(const float *in, float *out, int n) {
  __shared__ float tile[32][32];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  out[y * n + x] = tile[threadIdx.x][threadIdx.y];  // 32 wavefronts/request
}
