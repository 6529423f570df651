#define IDX(r, c, w) ((r) * (w) + (c))
#define BS 128
__global__ void m(float *a, int w) { a[IDX(threadIdx.y, threadIdx.x, w)] = 0; }
int main(){ m<<<1, dim3(BS/4, 4)>>>(0, 64); }
