// Lab l2-persistence (G7, CC >= 8.0): the sliding-window experiment. Every thread doubles one
// element of a small, often-touched region and one element of a large streamed region.
__global__ void sliding_window(int *persistent, int *streaming, int stream_words, int freq_words)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    persistent[tid % freq_words] = 2 * persistent[tid % freq_words];
    streaming[tid % stream_words] = 2 * streaming[tid % stream_words];
}
