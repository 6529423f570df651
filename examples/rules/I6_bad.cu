// I6: accurate transcendentals in the hot loop of a kernel.
__global__ void wave(const float *phase, float *out, int n, int terms)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 1; k <= terms; k++) {
        acc += sinf(k * phase[i]) / k;  // expect: I6
        acc *= expf(-0.01f * k);  // expect: I6
    }
    out[i] = acc + cosf(phase[i]);
}
