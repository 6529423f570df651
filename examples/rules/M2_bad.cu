// M2: grabbing (most of) the free device memory.
void make_arena(char **arena, float **cache)
{
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    cudaMalloc(arena, free_b);  // expect: M2
    size_t share = total_b / 2;
    cudaMalloc((void **)cache, share);  // expect: M2
}
