// Lab concurrent-kernels (E8). A small kernel (a few blocks) that runs a dependent arithmetic
// chain for a while: alone it leaves most SMs idle, so independent copies can run side by side.
__global__ void small_busy(float *out, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)tid;
    for (int k = 0; k < iters; k++) {
        x = fmaf(x, 0.999999f, 1.0e-6f);
    }
    out[tid] = x;
}
