// Included by graph.cu.
__global__ void pull_labels(int *label, const int *parent, int n) {
  int tid = blockIdx.x * MAX_THREADS_PER_BLOCK + threadIdx.x;
  if (tid < n) label[tid] = label[parent[tid]];
}
