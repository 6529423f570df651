// Tiled transpose of a W x W matrix through shared memory, block (32, 32).
#define TD 32

__global__ void transpose_tile(float *dst, const float *src, int W) {
  __shared__ float t[TD][TD];
  int x = blockIdx.x * TD + threadIdx.x;
  int y = blockIdx.y * TD + threadIdx.y;
  t[threadIdx.y][threadIdx.x] = src[y * W + x];
  __syncthreads();
  int ox = blockIdx.y * TD + threadIdx.x;
  int oy = blockIdx.x * TD + threadIdx.y;
  dst[oy * W + ox] = t[threadIdx.x][threadIdx.y];
}

__global__ void transpose_tile_padded(float *dst, const float *src, int W) {
  __shared__ float t[TD][TD + 1];
  int x = blockIdx.x * TD + threadIdx.x;
  int y = blockIdx.y * TD + threadIdx.y;
  t[threadIdx.y][threadIdx.x] = src[y * W + x];
  __syncthreads();
  int ox = blockIdx.y * TD + threadIdx.x;
  int oy = blockIdx.x * TD + threadIdx.y;
  dst[oy * W + ox] = t[threadIdx.x][threadIdx.y];
}

int main() {
  dim3 block(TD, TD);
  transpose_tile<<<dim3(8, 8), block>>>(0, 0, 256);
  transpose_tile_padded<<<dim3(8, 8), block>>>(0, 0, 256);
  return 0;
}
