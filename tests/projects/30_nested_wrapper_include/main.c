#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "kernel/kernel_gpu_cuda_wrapper.h"

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 20;
  charge4 *pts = (charge4 *)calloc(n, sizeof(charge4));
  float *pot = (float *)malloc(sizeof(float) * n);
  kernel_gpu_cuda_wrapper(pts, pot, n);
  printf("%f\n", pot[0]);
  free(pts);
  free(pot);
  return 0;
}
