// A5: a buffer goes to the host and back between two kernels.
__global__ void step1(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
__global__ void step2(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }

void clamp_on_host(float *h, int n) { for (int i = 0; i < n; ++i) if (h[i] > 1.0f) h[i] = 1.0f; }

void pipeline(float *d_x, float *h_x, int n)
{
    size_t bytes = n * sizeof(float);
    step1<<<n / 256, 256>>>(d_x, n);
    cudaMemcpy(h_x, d_x, bytes, cudaMemcpyDeviceToHost);  // expect: A5
    clamp_on_host(h_x, n);
    cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice);
    step2<<<n / 256, 256>>>(d_x, n);
}
