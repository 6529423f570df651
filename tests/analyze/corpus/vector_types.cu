__global__ void vt(const float4 *a, float2 *b) { float4 v = a[threadIdx.x]; b[threadIdx.x] = make_float2(v.x, v.y); }
