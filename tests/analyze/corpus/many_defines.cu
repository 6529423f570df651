#define A 4
#define B (A * 8)
#define C (B + A)
#define SELF SELF
__global__ void md(float *a) { a[threadIdx.x * A + SELF] = 1; a[threadIdx.x + C] = 2; }
