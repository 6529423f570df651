// I2: unsigned loop counters.
__global__ void sum_rows(const float *m, float *out, unsigned int cols)
{
    float acc = 0.0f;
    for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) {  // expect: I2
        acc += m[blockIdx.x * cols + c];
    }
    for (size_t k = 0; k < cols / 64; ++k) {  // expect: I2
        acc *= 0.5f;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
