// X2: pack, then one copy; large chunked copies are fine.
#include <cstring>

void upload(float *d, float **rows, float *staging, int nrows, int ncols)
{
    for (int r = 0; r < nrows; ++r) {
        memcpy(staging + r * ncols, rows[r], ncols * sizeof(float));   // host-side packing
    }
    cudaMemcpy(d, staging, (size_t)nrows * ncols * sizeof(float), cudaMemcpyHostToDevice);
}

void upload_chunks(char *d, const char *h, int chunks)
{
    for (int c = 0; c < chunks; ++c) {
        cudaMemcpy(d + c * (64 << 20), h + c * (64 << 20), 64 << 20, cudaMemcpyHostToDevice);
    }
}
