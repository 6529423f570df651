#include <cstdio>

#include "llmc/cuda_common.h"
#include "llmc/encoder.cuh"
#include "llmc/rowmean.cuh"

int main() {
  int B = 8, T = 1024, C = 768, V = 50257;
  int *d_inp;
  float *d_out, *d_wte, *d_wpe, *d_mean;
  cudaMalloc(&d_inp, sizeof(int) * B * T);
  cudaMalloc(&d_out, sizeof(float) * B * T * C);
  cudaMalloc(&d_wte, sizeof(float) * V * C);
  cudaMalloc(&d_wpe, sizeof(float) * T * C);
  cudaMalloc(&d_mean, sizeof(float) * B * T);
  encoder_forward(d_out, d_inp, d_wte, d_wpe, B, T, C);
  row_mean(d_mean, d_out, B * T, C);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
