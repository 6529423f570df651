// I2: signed loop counters.
__global__ void sum_rows(const float *m, float *out, int cols)
{
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        acc += m[blockIdx.x * cols + c];
    }
    for (int k = 0; k < 4; ++k) {
        acc *= 0.5f;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
