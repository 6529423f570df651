__global__ void wl(int *a, int n) { int i = threadIdx.x; while (i < n) { a[i] += 1; i += 32; } do { a[0]++; } while (0); }
