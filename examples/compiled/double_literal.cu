// Double-precision literals in float code: sometimes real FP64 work, sometimes folded away.

__global__ void scale_double(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 1.1 + 0.5;  // 1.1 is a double: widened, computed in FP64, narrowed
}

__global__ void scale_float(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 1.1f + 0.5f;
}

__global__ void times_two(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0;  // exact in float too: the compiler emits a float add
}

__global__ void third(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float k = 1.0 / 3.0;  // a compile-time constant: folded to a float immediate
    if (i < n) y[i] = x[i] * k;
}
