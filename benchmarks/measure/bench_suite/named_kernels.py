"""Kernels from NVIDIA/cuda-samples (public code nobody here wrote), benchmarked by their C++ names.

Sources on the GPU machine: .carry/cuda-samples (a copy of /work/ext/cuda-samples' sources; not
committed). Each entry: file, name expression, grid, block, dynamic shared memory, --arg specs
(the CLI grammar), roles.
"""

ROOT = ".carry/cuda-samples"
COMMON = ROOT + "/Common"
RED = ROOT + "/Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu"
N = 1 << 24

NAMED = [
    {"file": RED, "kernel": "reduce6<float, 256, true>", "grid": [2048, 1, 1], "block": [256, 1, 1], "smem": 256 * 4,
     "args": [f"float32[{N}]:rand", "float32[2048]:zeros@out", f"uint32={N}"]},
    {"file": RED, "kernel": "reduce7<float, 256, true>", "grid": [2048, 1, 1], "block": [256, 1, 1],
     "smem": (256 // 32 + 1) * 4, "args": [f"float32[{N}]:rand", "float32[2048]:zeros@out", f"uint32={N}"]},
    {"file": RED, "kernel": "reduce4<int, 512>", "grid": [2048, 1, 1], "block": [512, 1, 1], "smem": 512 * 4,
     "args": ["int32[4194304]:rand", "int32[2048]:zeros@out", "uint32=4194304"]},
    {"file": RED, "kernel": "cg_reduce<float>", "grid": [4096, 1, 1], "block": [256, 1, 1], "smem": 256 * 4,
     "args": [f"float32[{N}]:rand", "float32[4096]:zeros@out", f"uint32={N}"]},
    {"file": ROOT + "/Samples/0_Introduction/matrixMul/matrixMul.cu", "kernel": "MatrixMulCUDA<32>",
     "grid": [32, 32, 1], "block": [32, 32, 1], "smem": 0,
     "args": ["float32[1048576]:zeros@out", "float32[1048576]:rand", "float32[1048576]:rand", "int32=1024", "int32=1024"]},
    {"file": ROOT + "/Samples/0_Introduction/mergeSort/mergeSort.cu", "kernel": "mergeSortSharedKernel<1U>",
     "grid": [1024, 1, 1], "block": [512, 1, 1], "smem": 0,
     "args": ["uint32[1048576]:zeros@out", "uint32[1048576]:zeros@out", "uint32[1048576]:rand",
              "uint32[1048576]:arange", "uint32=1024"]},
    {"file": ROOT + "/Samples/0_Introduction/simpleTemplates/simpleTemplates.cu", "kernel": "testKernel<float>",
     "grid": [1, 1, 1], "block": [256, 1, 1], "smem": 256 * 4,
     "args": ["float32[256]:rand", "float32[256]:zeros@out"]},
]
