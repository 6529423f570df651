// A5: the host step as a kernel; the result leaves the device once, at the end.
__global__ void step1(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
__global__ void clamp(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = fminf(x[i], 1.0f); }
__global__ void step2(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }

void pipeline(float *d_x, float *h_x, int n)
{
    size_t bytes = n * sizeof(float);
    cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice);
    step1<<<n / 256, 256>>>(d_x, n);
    clamp<<<n / 256, 256>>>(d_x, n);
    step2<<<n / 256, 256>>>(d_x, n);
    cudaMemcpy(h_x, d_x, bytes, cudaMemcpyDeviceToHost);
}
