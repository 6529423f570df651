__global__ void l(float *a) { auto f = [&](int i) { return a[i] * 2; }; a[threadIdx.x] = f(threadIdx.x); }
