// Accesses through dereferenced pointers: parameters, derived locals, nested offsets, casts.
__global__ void pd(float *a, const float *b, int n, int **pp) {
  float *row = a + blockIdx.x * n;
  const float *src = b + 1;
  *(row + threadIdx.x) = *(src + threadIdx.x) + *((row + 32) - threadIdx.x);
  (*(a + threadIdx.x))++;
  *row += **pp + *(const float4 *)(b + 4 * threadIdx.x).x;
  for (const float *p = b; p < b + n; p += blockDim.x) *row += *(p + threadIdx.x);
}
int main() { pd<<<8, 128>>>(0, 0, 1024, 0); }
