// X3: pinned host buffers (allocated pinned, or registered).
#include <cstdlib>

void roundtrip(float *d, int n)
{
    size_t bytes = n * sizeof(float);
    float *h_in, *h_out;
    cudaMallocHost(&h_in, bytes);
    cudaHostAlloc((void **)&h_out, bytes, cudaHostAllocDefault);
    float *h_reg = (float *)malloc(bytes);
    cudaHostRegister(h_reg, bytes, cudaHostRegisterDefault);
    cudaMemcpy(d, h_in, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(h_out, d, bytes, cudaMemcpyDeviceToHost);
    cudaMemcpy(d, h_reg, bytes, cudaMemcpyHostToDevice);
    cudaHostUnregister(h_reg);
    free(h_reg);
    cudaFreeHost(h_in);
    cudaFreeHost(h_out);
}
