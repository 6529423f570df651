// 8- and 16-byte shared-memory accesses: split into half- and quarter-warp phases.
__global__ void shared_double(double *out) {
  __shared__ double d[256];
  d[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = d[(threadIdx.x * 2) % 256];
}

__global__ void shared_float4(float4 *out) {
  __shared__ float4 v[256];
  v[threadIdx.x] = make_float4(0.f, 1.f, 2.f, 3.f);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v[threadIdx.x];
}
