// I6 fixed: the intrinsics in the loop, where their accuracy was checked to be enough. A single
// accurate call outside any loop is not worth a finding.
__global__ void wave(const float *phase, float *out, int n, int terms)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 1; k <= terms; k++) {
        acc += __sinf(k * phase[i]) / k;
        acc *= __expf(-0.01f * k);
    }
    out[i] = acc + cosf(phase[i]);
}
