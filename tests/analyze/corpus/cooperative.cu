#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void co(float *a) { auto g = cg::this_thread_block(); a[g.thread_rank()] = 1; g.sync(); }
