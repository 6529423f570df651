__global__ void hb(float *a) { a[threadIdx.x] = 1; }
int main() { hb<<<1, 4096>>>(0); }
