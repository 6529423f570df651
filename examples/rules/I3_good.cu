// I3: rsqrtf / rsqrt.
__global__ void normalize(float3 *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float3 p = v[i];
    float inv = rsqrtf(p.x * p.x + p.y * p.y + p.z * p.z);
    float len = 2.0f / sqrtf(p.x);   // not a reciprocal: a different computation
    v[i] = make_float3(p.x * inv, p.y * inv, p.z * len);
}

__device__ double inv_norm(double x, double y)
{
    return rsqrt(x * x + y * y);
}
