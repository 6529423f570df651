namespace ns { namespace inner {
__global__ void nk(float *a) { a[threadIdx.x] = 1; }
} }
int main() { ns::inner::nk<<<1, 64>>>(0); }
