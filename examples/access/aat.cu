// C = A A^T for an M x T matrix A, T = warp size (BPG 9.2.3.3). Block (T, T).
#define T 32

__global__ void aat_naive(const float *a, float *c, int M) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int q = 0; q < T; q++) {
    acc += a[row * T + q] * a[col * T + q];
  }
  c[row * M + col] = acc;
}

__global__ void aat_tiled(const float *a, float *c, int M) {
  __shared__ float rows[T][T];
  __shared__ float cols[T][T];
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  rows[threadIdx.y][threadIdx.x] = a[row * T + threadIdx.x];
  cols[threadIdx.x][threadIdx.y] = a[(blockIdx.x * blockDim.x + threadIdx.y) * T + threadIdx.x];
  __syncthreads();
  float acc = 0.0f;
  for (int q = 0; q < T; q++) {
    acc += rows[threadIdx.y][q] * cols[q][threadIdx.x];
  }
  c[row * M + col] = acc;
}

__global__ void aat_tiled_padded(const float *a, float *c, int M) {
  __shared__ float rows[T][T];
  __shared__ float cols[T][T + 1];
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  rows[threadIdx.y][threadIdx.x] = a[row * T + threadIdx.x];
  cols[threadIdx.x][threadIdx.y] = a[(blockIdx.x * blockDim.x + threadIdx.y) * T + threadIdx.x];
  __syncthreads();
  float acc = 0.0f;
  for (int q = 0; q < T; q++) {
    acc += rows[threadIdx.y][q] * cols[q][threadIdx.x];
  }
  c[row * M + col] = acc;
}

int main() {
  dim3 block(T, T);
  aat_naive<<<dim3(4, 4), block>>>(0, 0, 128);
  aat_tiled<<<dim3(4, 4), block>>>(0, 0, 128);
  aat_tiled_padded<<<dim3(4, 4), block>>>(0, 0, 128);
  return 0;
}
