// X4: "async" copies that cannot overlap.
#include <cstdlib>

void stage(float *d, float *h_pinned, int n, cudaStream_t s)
{
    size_t bytes = n * sizeof(float);
    float *h = (float *)malloc(bytes);
    cudaMemcpyAsync(d, h_pinned, bytes, cudaMemcpyHostToDevice, 0);  // expect: X4
    cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s);  // expect: X4
    cudaMemcpyAsync(h_pinned, d, bytes, cudaMemcpyDeviceToHost);  // expect: X4
    free(h);
}
