// X3: pageable host buffers used for copies.
#include <cstdlib>
#include <vector>

void roundtrip(float *d, int n)
{
    size_t bytes = n * sizeof(float);
    float *h_in = (float *)malloc(bytes);
    std::vector<float> h_out(n);
    double *h_aux = new double[n];
    cudaMemcpy(d, h_in, bytes, cudaMemcpyHostToDevice);  // expect: X3
    cudaMemcpy(h_out.data(), d, bytes, cudaMemcpyDeviceToHost);  // expect: X3
    cudaMemcpy(d, h_in, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(h_aux, d, bytes, cudaMemcpyDeviceToHost);  // expect: X3
    free(h_in);
    delete[] h_aux;
}
