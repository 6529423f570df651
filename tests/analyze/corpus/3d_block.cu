__global__ void b3(float *a) { int i = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); a[i] = 1; }
int main() { b3<<<1, dim3(8, 4, 2)>>>(0); }
