// Included by graph.cu.
__global__ void init_levels(int *level, int n, int source) {
  int tid = blockIdx.x * MAX_THREADS_PER_BLOCK + threadIdx.x;
  if (tid < n) level[tid] = (tid == source) ? 0 : -1;
}
