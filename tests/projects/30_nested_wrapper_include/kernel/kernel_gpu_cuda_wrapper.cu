#ifdef __cplusplus
extern "C" {
#endif

#include "../common.h"
#include "../util/device.h"

#include "./kernel_gpu_cuda.cu"

#include "./kernel_gpu_cuda_wrapper.h"

void kernel_gpu_cuda_wrapper(const void *h_pts, float *h_pot, int n) {
  charge4 *d_pts;
  float *d_pot;
  check_error(cudaMalloc((void **)&d_pts, sizeof(charge4) * n));
  check_error(cudaMalloc((void **)&d_pot, sizeof(float) * n));
  check_error(cudaMemcpy(d_pts, h_pts, sizeof(charge4) * n, cudaMemcpyHostToDevice));
  dim3 threads(NUMBER_THREADS);
  dim3 blocks((n + NUMBER_THREADS - 1) / NUMBER_THREADS);
  charge_scale<<<blocks, threads>>>(d_pts, d_pot, 8.99f, n);
  check_error(cudaGetLastError());
  check_error(cudaMemcpy(h_pot, d_pot, sizeof(float) * n, cudaMemcpyDeviceToHost));
  check_error(cudaFree(d_pts));
  check_error(cudaFree(d_pot));
}

#ifdef __cplusplus
}
#endif
