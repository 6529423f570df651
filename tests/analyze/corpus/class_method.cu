class Foo { public: __device__ int get() const { return 3; } };
__global__ void cm(float *a) { Foo f; a[f.get() + threadIdx.x] = 1; }
