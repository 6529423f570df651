// C = A B for an M x T times T x N product, T = warp size (BPG 9.2.3.2). Block (T, T).
#define T 32

__global__ void ab_naive(const float *a, const float *b, float *c, int N) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int q = 0; q < T; q++) {
    acc += a[row * T + q] * b[q * N + col];
  }
  c[row * N + col] = acc;
}

__global__ void ab_tile_a(const float *a, const float *b, float *c, int N) {
  __shared__ float as[T][T];
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  as[threadIdx.y][threadIdx.x] = a[row * T + threadIdx.x];
  __syncwarp();
  float acc = 0.0f;
  for (int q = 0; q < T; q++) {
    acc += as[threadIdx.y][q] * b[q * N + col];
  }
  c[row * N + col] = acc;
}

__global__ void ab_tile_ab(const float *a, const float *b, float *c, int N) {
  __shared__ float as[T][T];
  __shared__ float bs[T][T];
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  as[threadIdx.y][threadIdx.x] = a[row * T + threadIdx.x];
  bs[threadIdx.y][threadIdx.x] = b[threadIdx.y * N + col];
  __syncthreads();
  float acc = 0.0f;
  for (int q = 0; q < T; q++) {
    acc += as[threadIdx.y][q] * bs[q][threadIdx.x];
  }
  c[row * N + col] = acc;
}

int main() {
  dim3 block(T, T);
  ab_naive<<<dim3(4, 4), block>>>(0, 0, 0, 128);
  ab_tile_a<<<dim3(4, 4), block>>>(0, 0, 0, 128);
  ab_tile_ab<<<dim3(4, 4), block>>>(0, 0, 0, 128);
  return 0;
}
