// X2: one copy per row.
void upload(float *d, float **rows, int nrows, int ncols)
{
    for (int r = 0; r < nrows; ++r) {
        cudaMemcpy(d + r * ncols, rows[r], ncols * sizeof(float), cudaMemcpyHostToDevice);  // expect: X2
    }
}

void upload_params(float *d, const float *h, int k)
{
    int i = 0;
    while (i < k) {
        cudaMemcpy(&d[i], &h[i], sizeof(float), cudaMemcpyHostToDevice);  // expect: X2
        ++i;
    }
}
