// Instantiates the header's templated kernel. SCALE_BLOCK is set by the build (CMakeLists.txt),
// like the C++ standard: compiled without the project's flags this file does not build.
#include <tiles/common.cuh>

#ifndef SCALE_BLOCK
#error "SCALE_BLOCK is defined by the build: compile with the project's flags"
#endif

static_assert(__cplusplus >= 201703L, "the project builds as C++17");

void launch_scale(float *data, float factor, int n) {
  if constexpr (SCALE_BLOCK % 32 == 0) {
    scale_rows<float, SCALE_BLOCK><<<(n + SCALE_BLOCK - 1) / SCALE_BLOCK, SCALE_BLOCK>>>(data, factor, n);
  }
}
