// Shared-memory wavefronts per request for 4-, 8- and 16-byte loads under several address patterns
// (profiled by benchmarks/model/shared_wide_probe.py with Nsight Compute). Our own code. Each kernel
// loads ITERS times from a 4 KB shared array with the pattern in its name and writes one value.
#include <cstdio>
#include <cuda_runtime.h>

#define ITERS 64
#define PROBE(NAME, T, INDEX)                                                        \
  __global__ void NAME(float *out) {                                                 \
    __shared__ __align__(16) float raw[1024];                                        \
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) raw[i] = (float)i;          \
    __syncthreads();                                                                 \
    const T *s = reinterpret_cast<const T *>(raw);                                   \
    const int t = threadIdx.x % 32; (void)t;                                         \
    float acc = 0.0f;                                                                \
    _Pragma("unroll 1")  /* one load instruction per iteration, of the width of T */ \
    for (int k = 0; k < ITERS; ++k) {                                                \
      T v = s[(INDEX) % (4096 / sizeof(T))];                                         \
      const float *f = reinterpret_cast<const float *>(&v); /* use every word */   \
      _Pragma("unroll") for (int c = 0; c < (int)(sizeof(T) / 4); ++c) acc += f[c];  \
    }                                                                                \
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;                                \
  }

PROBE(ld4_bcast, float, k)
PROBE(ld4_unit, float, t + k)
PROBE(ld8_bcast, float2, k)
PROBE(ld8_unit, float2, t + k)
PROBE(ld8_halves, float2, t / 16 + k)
PROBE(ld16_bcast, float4, k)
PROBE(ld16_unit, float4, t + k)
PROBE(ld16_halves, float4, t / 16 + k)
PROBE(ld16_quarters, float4, t / 8 + k)
PROBE(ld16_pairs, float4, t / 2 + k)
PROBE(ld16_stride2, float4, 2 * t + k)

int main() {
  float *out;
  cudaMalloc(&out, 132 * 256 * sizeof(float));
  ld4_bcast<<<132, 256>>>(out); ld4_unit<<<132, 256>>>(out);
  ld8_bcast<<<132, 256>>>(out); ld8_unit<<<132, 256>>>(out); ld8_halves<<<132, 256>>>(out);
  ld16_bcast<<<132, 256>>>(out); ld16_unit<<<132, 256>>>(out); ld16_halves<<<132, 256>>>(out);
  ld16_quarters<<<132, 256>>>(out); ld16_pairs<<<132, 256>>>(out); ld16_stride2<<<132, 256>>>(out);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("%s\n", cudaGetErrorString(e));
  cudaFree(out);
  return e == cudaSuccess ? 0 : 1;
}
