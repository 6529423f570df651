struct Pix { unsigned char r, g, b; };
__device__ float helper(float v) { return v * v + 1.0f; }
__global__ void fold_mul(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0;
}
__global__ void fold_const(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float third = 1.0 / 3.0;
    if (i < n) y[i] = x[i] * third;
}
__global__ void divs(const int* a, int* b, int d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i] / d + a[i] % d;
}
__global__ void pix(const Pix* p, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = p[i].r + p[i].g + p[i].b;
}
__global__ void vec4(const float4* a, float4* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float4 v = a[i]; v.x = helper(v.x); b[i] = v; }
}
__global__ void trans(const float* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = sinf(a[i]) + expf(a[i]) + logf(a[i]);
}
