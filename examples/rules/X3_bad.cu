// X3: pageable host buffers copied again and again (a copy in a loop).
#include <cstdlib>
#include <vector>

void roundtrip(float *d, int n, int steps)
{
    size_t bytes = n * sizeof(float);
    float *h_in = (float *)malloc(bytes);
    std::vector<float> h_out(n);
    double *h_aux = new double[n];
    for (int s = 0; s < steps; ++s) {
        cudaMemcpy(d, h_in, bytes, cudaMemcpyHostToDevice);  // expect: X3
        cudaMemcpy(h_out.data(), d, bytes, cudaMemcpyDeviceToHost);  // expect: X3
        cudaMemcpy(d, h_in, bytes, cudaMemcpyHostToDevice);
        cudaMemcpy(h_aux, d, bytes, cudaMemcpyDeviceToHost);  // expect: X3
    }
    free(h_in);
    delete[] h_aux;
}
