#include <thrust/device_vector.h>
template <typename T, int N>
__global__ void scale(T *v, T f) { int i = blockIdx.x * N + threadIdx.x; v[i] *= f; }
