// Lab math-functions (I3, I5, I7, I8, I9, I10). Pairs of kernels computing the same value
// the slow way (as often written) and the way the guide recommends. Arguments are positive:
// x = base + (tid + k) * step.

// I8: a small integer power
__global__ void pow_square(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += powf(x, 2.0f);
    }
    out[tid] = acc;
}

__global__ void square_mul(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += x * x;
    }
    out[tid] = acc;
}

// I5: a fractional exponent
__global__ void pow_third(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += powf(x, 1.0f / 3.0f);
    }
    out[tid] = acc;
}

__global__ void cbrt_call(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += cbrtf(x);
    }
    out[tid] = acc;
}

// I9: a power of two
__global__ void pow_base2(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += powf(2.0f, x);
    }
    out[tid] = acc;
}

__global__ void exp2_call(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += exp2f(x);
    }
    out[tid] = acc;
}

// I10: sine of pi times x
__global__ void sin_of_pi_x(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += sinf(3.14159265f * x);
    }
    out[tid] = acc;
}

__global__ void sinpi_call(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += sinpif(x);
    }
    out[tid] = acc;
}

// I7: sine and cosine of one argument
__global__ void sin_plus_cos(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += sinf(x) + cosf(x);
    }
    out[tid] = acc;
}

__global__ void sincos_call(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        float s, c;
        sincosf(x, &s, &c);
        acc += s + c;
    }
    out[tid] = acc;
}

// I3: reciprocal square root
__global__ void recip_sqrt(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += 1.0f / sqrtf(x);
    }
    out[tid] = acc;
}

__global__ void rsqrt_call(float *out, float base, float step, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        float x = base + (float)(tid + k) * step;
        acc += rsqrtf(x);
    }
    out[tid] = acc;
}
