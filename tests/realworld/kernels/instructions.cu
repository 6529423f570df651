// Labelled real-world set: arithmetic and instruction patterns. Our own minimal reproductions of
// code seen in cuda-samples (BlackScholes, nbody, MonteCarlo), physics and graphics kernels.
#include <cuda_runtime.h>
#include <cuda_fp16.h>

// Squared distance with pow(): a multiply is exact and far cheaper.
__global__ void squared_distance_pow(const float *x, const float *y, float *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = powf(x[i] - y[i], 2.0f) + powf(x[i] + y[i], 2.0f);
}

// Powers of two through pow(): exp2f says it directly.
__global__ void octave_gain(const float *semitones, float *gain, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) gain[i] = powf(2.0f, semitones[i] / 12.0f);
}

// Inverse square root through a division (nbody's body-body force shape).
__global__ void inverse_norm_div(const float4 *p, float *inv, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = p[i];
        inv[i] = 1.0f / sqrtf(v.x * v.x + v.y * v.y + v.z * v.z + 1e-9f);
    }
}

// Rotation with sinf and cosf of one angle: sincosf computes both at once.
__global__ void rotate_points(const float *angle, float2 *pt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = sinf(angle[i]);
        float c = cosf(angle[i]);
        float2 q = pt[i];
        pt[i] = make_float2(c * q.x - s * q.y, s * q.x + c * q.y);
    }
}

// sin(pi * x): sinpif is exact for the multiple of pi and cheaper.
__global__ void window_sine(const float *x, float *w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] = sinf(3.14159265f * x[i]);
}

// A double literal promotes the whole expression to double (BlackScholes-style constant).
__global__ void scale_half_double(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 0.5 + 1.0;
}

// Cube root through pow with a fractional exponent.
__global__ void cube_root_pow(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = powf(in[i], 1.0f / 3.0f);
}

// Unsigned loop counter with a runtime bound and a scaled index: the compiler must honour wrap-around.
__global__ void strided_sum_unsigned(const float *in, float *out, unsigned int n, unsigned int stride) {
    float acc = 0.0f;
    for (unsigned int k = 0; k < n; ++k) acc += in[k * stride + threadIdx.x];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// Unsigned counter of a fully unrolled fixed-length loop: nothing left to optimize.
__global__ void unrolled_unsigned(const float4 *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = in[i];
    float c[4] = {v.x, v.y, v.z, v.w};
    float acc = 0.0f;
#pragma unroll
    for (unsigned int j = 0; j < 4; ++j) acc += c[j] * c[j];
    out[i] = acc;
}

// Legacy 24-bit multiply intrinsics (old CUDA samples).
__global__ void index_mul24(const float *in, float *out, int n) {
    int i = __mul24(blockIdx.x, blockDim.x) + threadIdx.x;
    if (i < n) out[i] = in[i] * 2.0f;
}

// Scalar half arithmetic in a loop: half2 would do two lanes per instruction.
__global__ void half_axpy_loop(const __half *x, __half *y, __half a, int n, int reps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half v = y[i];
    for (int r = 0; r < reps; ++r) v = __hadd(__hmul(a, x[r * n + i]), v);
    y[i] = v;
}

// Series of exponentials per element (a kernel-density estimate): accurate expf where __expf would do.
__global__ void kde_exp_series(const float *x, const float *centers, float *density, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int j = 0; j < m; ++j) {
        float d = x[i] - centers[j];
        acc += expf(-d * d) + expf(-0.5f * d * d) + logf(1.0f + d * d);
    }
    density[i] = acc;
}

// Per-thread array indexed by data: lives in local memory.
__global__ void local_bucket_counts(const int *keys, int *counts, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int local[16];
    for (int b = 0; b < 16; ++b) local[b] = 0;
    for (int k = i; k < n; k += blockDim.x * gridDim.x) local[keys[k] & 15]++;
    for (int b = 0; b < 16; ++b) atomicAdd(&counts[b], local[b]);
}

// Division by a runtime power of two (a tile width passed in): shifts and masks are cheaper.
__global__ void tile_coords(const int *idx, int2 *out, int n, int tile) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = make_int2(idx[i] / tile, idx[i] % tile);
}

// Clean fused multiply-add kernel: nothing to fix.
__global__ void fma_clean(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = fmaf(a[i], b[i], c[i]);
}

void launch_instr(float *a, float *b, float4 *p, float2 *q, __half *h, int *k, int2 *o, unsigned char *u, int n) {
    squared_distance_pow<<<n / 256, 256>>>(a, b, a, n);
    octave_gain<<<n / 256, 256>>>(a, b, n);
    inverse_norm_div<<<n / 256, 256>>>(p, a, n);
    rotate_points<<<n / 256, 256>>>(a, q, n);
    window_sine<<<n / 256, 256>>>(a, b, n);
    scale_half_double<<<n / 256, 256>>>(a, b, n);
    cube_root_pow<<<n / 256, 256>>>(a, b, n);
    strided_sum_unsigned<<<1024, 256>>>(a, b, 1024u, 1024u);
    unrolled_unsigned<<<n / 256, 256>>>(p, a, n);
    index_mul24<<<n / 256, 256>>>(a, b, n);
    half_axpy_loop<<<n / 256, 256>>>(h, h, h[0], n, 8);
    kde_exp_series<<<n / 256, 256>>>(a, b, a, n, 64);
    local_bucket_counts<<<1024, 256>>>(k, k, n);
    tile_coords<<<n / 256, 256>>>(k, o, n, 64);
    fma_clean<<<n / 256, 256>>>(a, b, a, n);
}
