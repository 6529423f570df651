#pragma once

__global__ void transpose_naive(float *odata, const float *idata, int width, int height);
__global__ void transpose_shared(float *odata, const float *idata, int width, int height);
