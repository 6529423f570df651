// Register pressure: each thread keeps ACC independent accumulators live across the loop.
#ifndef ACC
#define ACC 24
#endif

__global__ void many_accumulators(const float4* __restrict__ in, float* __restrict__ out, int n) {
    float acc[ACC];
#pragma unroll
    for (int a = 0; a < ACC; ++a) acc[a] = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float4 v = in[i];
#pragma unroll
        for (int a = 0; a < ACC; ++a) acc[a] = fmaf(acc[a], v.x + a, v.y * acc[(a + 1) % ACC] + v.z - v.w);
    }
    float s = 0.0f;
#pragma unroll
    for (int a = 0; a < ACC; ++a) s += acc[a] * (a + 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

void launch(const float4* in, float* out, int n) {
    many_accumulators<<<1024, 256>>>(in, out, n);
}
