struct P { float x, y, z; };
__global__ void se(P *p, float *o) { o[threadIdx.x] = p[threadIdx.x].x; }
