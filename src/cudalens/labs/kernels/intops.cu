// Lab integer-ops (I1, I2).

// Division and modulo by n = 1 << log2n, a power of two known only at run time: the compiler
// cannot prove n is a power of two, so it emits the general (multi-instruction) division.
__global__ void divmod_var(int *out, int log2n, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int n = 1 << log2n;
    int acc = 0;
    for (int k = 0; k < iters; k++) {
        int v = tid + k * 7919;
        acc += v / n + v % n;
    }
    out[tid] = acc;
}

// The same results with a shift and a mask (valid for non-negative v).
__global__ void shift_mask(int *out, int log2n, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int n = 1 << log2n;
    int acc = 0;
    for (int k = 0; k < iters; k++) {
        int v = tid + k * 7919;
        acc += (v >> log2n) + (v & (n - 1));
    }
    out[tid] = acc;
}

// Strided gather with an unsigned loop counter: unsigned arithmetic must wrap around, which
// keeps the compiler from strength-reducing stride * i into a running pointer.
__global__ void loop_unsigned(float *out, const float *in, unsigned n, unsigned stride)
{
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (unsigned i = 0; i < n; i++) {
        acc += in[tid + stride * i];
    }
    out[tid] = acc;
}

// The same loop with a signed counter: overflow is undefined, so the compiler may optimize.
__global__ void loop_signed(float *out, const float *in, int n, int stride)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = 0; i < n; i++) {
        acc += in[tid + stride * i];
    }
    out[tid] = acc;
}
