__global__ void es(float *a) { extern __shared__ float s[]; s[threadIdx.x] = a[threadIdx.x]; __syncthreads(); a[threadIdx.x] = s[31 - threadIdx.x]; }
