// Kernels with one compiled-code pattern each, in a bad and a good version.

struct Rgb { unsigned char r, g, b; };                  // 3 bytes: read byte by byte
struct __align__(4) Rgba { unsigned char r, g, b, a; };  // 4 bytes, aligned: one 32-bit load

__global__ void gray_rgb(const Rgb* __restrict__ p, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 0.299f * p[i].r + 0.587f * p[i].g + 0.114f * p[i].b;
}

__global__ void gray_rgba(const Rgba* __restrict__ p, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { Rgba q = p[i]; out[i] = 0.299f * q.r + 0.587f * q.g + 0.114f * q.b; }
}

__global__ void copy_scalar(const float* __restrict__ a, float* __restrict__ b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i];
}

__global__ void copy_vector(const float4* __restrict__ a, float4* __restrict__ b, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) b[i] = a[i];
}

__global__ void bucket(const int* __restrict__ a, int* __restrict__ b, int buckets, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i] / buckets + a[i] % buckets;  // divisor known only at run time
}

__global__ void bucket_pow2(const int* __restrict__ a, int* __restrict__ b, int log2_buckets, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = (a[i] >> log2_buckets) + (a[i] & ((1 << log2_buckets) - 1));
}

__global__ void wave_accurate(const float* __restrict__ a, float* __restrict__ b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = sinf(a[i]) * expf(a[i]) / sqrtf(a[i] + 1.0f);
}

__global__ void wave_fast(const float* __restrict__ a, float* __restrict__ b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = __sinf(a[i]) * __expf(a[i]) * rsqrtf(a[i] + 1.0f);
}
