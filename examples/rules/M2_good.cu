// M2: allocate what the problem needs; cudaMemGetInfo used only for a check.
#include <cstdio>

void make_arena(char **arena, size_t n)
{
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    if (n > free_b) fprintf(stderr, "problem does not fit: %zu > %zu\n", n, free_b);
    cudaMalloc(arena, n);
}
