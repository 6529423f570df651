// Included by kernel_gpu_cuda_wrapper.cu after common.h.
__global__ void charge_scale(const charge4 *pts, float *pot, float k, int n) {
  int i = blockIdx.x * NUMBER_THREADS + threadIdx.x;
  if (i < n) {
    pot[i] = k * pts[i].q;
  }
}
