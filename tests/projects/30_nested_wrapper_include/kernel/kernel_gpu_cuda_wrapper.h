#ifdef __cplusplus
extern "C" {
#endif

void kernel_gpu_cuda_wrapper(const void *h_pts, float *h_pot, int n);

#ifdef __cplusplus
}
#endif
