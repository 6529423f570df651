// Our own translation unit for the real-world validation: it includes siboehm/SGEMM_CUDA's kernel
// headers (not copied; -I <checkout>/src) and instantiates each kernel with the template values
// that project's runner.cu launches (sm_80+ settings). Launch configurations are in the plan of
// benchmarks/realworld/realworld_validate.py.
#include <cuda_runtime.h>
#include "kernels.cuh"

template __global__ void sgemm_global_mem_coalesce<32>(int, int, int, float, const float *, const float *, float, float *);
template __global__ void sgemm_shared_mem_block<32>(int, int, int, float, const float *, const float *, float, float *);
template __global__ void sgemm1DBlocktiling<64, 64, 8, 8>(int, int, int, float, const float *, const float *, float, float *);
template __global__ void sgemm2DBlocktiling<128, 128, 8, 8, 8>(int, int, int, float, const float *, const float *, float, float *);
template __global__ void sgemmVectorize<128, 128, 8, 8, 8>(int, int, int, float, float *, float *, float, float *);
template __global__ void sgemmResolveBankConflicts<128, 128, 8, 8, 8>(int, int, int, float, float *, float *, float, float *);
template __global__ void sgemmResolveBankExtraCol<128, 128, 8, 8, 8>(int, int, int, float, float *, float *, float, float *);
template __global__ void sgemmAutotuned<128, 128, 16, 8, 8>(int, int, int, float, float *, float *, float, float *);
template __global__ void sgemmWarptiling<128, 128, 16, 64, 64, 4, 8, 4, 128>(int, int, int, float, float *, float *, float, float *);
template __global__ void sgemmDoubleBuffering<128, 256, 16, 128, 32, 1, 8, 8, 256>(int, int, int, float, float *, float *, float, float *);
