// I3: reciprocal square root written as a division.
__global__ void normalize(float3 *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float3 p = v[i];
    float inv = 1.0f / sqrtf(p.x * p.x + p.y * p.y + p.z * p.z);  // expect: I3
    v[i] = make_float3(p.x * inv, p.y * inv, p.z * inv);
}

__device__ double inv_norm(double x, double y)
{
    return 1 / (sqrt(x * x + y * y));  // expect: I3
}
