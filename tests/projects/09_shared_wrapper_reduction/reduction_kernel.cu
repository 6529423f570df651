#include <cuda_runtime.h>

// Dynamic shared memory behind a conversion operator: one extern array for every T.
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

// Interleaved addressing with a modulo test: the active lanes are spread over every warp.
template <class T>
__global__ void reduce_mod(const T *g_in, T *g_out, unsigned int n) {
  T *sdata = SharedMemory<T>();
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? g_in[i] : 0;
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    if ((tid % (2 * s)) == 0) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) g_out[blockIdx.x] = sdata[0];
}

// Interleaved addressing with a strided index: no divergence, but 2-, 4-, 8-... way bank conflicts.
template <class T>
__global__ void reduce_strided(const T *g_in, T *g_out, unsigned int n) {
  T *sdata = SharedMemory<T>();
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? g_in[i] : 0;
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    int index = 2 * s * tid;
    if (index < blockDim.x) {
      sdata[index] += sdata[index + s];
    }
    __syncthreads();
  }
  if (tid == 0) g_out[blockIdx.x] = sdata[0];
}

template <class T>
void reduce(int size, int threads, int blocks, int whichKernel, T *d_in, T *d_out) {
  dim3 dimBlock(threads, 1, 1);
  dim3 dimGrid(blocks, 1, 1);
  int smemSize = threads * sizeof(T);
  switch (whichKernel) {
    case 0:
      reduce_mod<T><<<dimGrid, dimBlock, smemSize>>>(d_in, d_out, size);
      break;
    case 1:
    default:
      reduce_strided<T><<<dimGrid, dimBlock, smemSize>>>(d_in, d_out, size);
      break;
  }
}

template void reduce<float>(int size, int threads, int blocks, int whichKernel, float *d_in, float *d_out);
