__global__ void nl(const float *a, float *c, int n) { float s = 0; for (int i = 0; i < 4; i++) for (int j = i; j < 8; j += 2) s += a[i * 32 + j + threadIdx.x]; c[threadIdx.x] = s; }
