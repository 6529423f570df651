"""The tuning problem of benchmarks/tune: examples/tune/gemm.cu at M = N = K = 2048 over 295 configurations.

One definition shared by the cudalens runs (run_tune.py), the Ray runs and the kernel_tuner run
(kernel_tuner_gemm.py), so all of them search the same space with the same restrictions.
"""

from __future__ import annotations

M = N = K = 2048
VALUES = {"BM": [32, 64, 128, 256], "BN": [32, 64, 128, 256], "BK": [8, 16, 32], "TM": [2, 4, 8], "TN": [2, 4, 8]}
# threads = (BM/TM)*(BN/TN) must be a whole warp multiple the loads can be split over
RESTRICTIONS = [
    "(BM/TM)*(BN/TN) >= 32",
    "(BM/TM)*(BN/TN) <= 1024",
    "(BM*BK) % ((BM/TM)*(BN/TN)) == 0",
    "(BN*BK) % ((BM/TM)*(BN/TN)) == 0",
]
GRID = ["N/BN", "M/BM"]
BLOCK = ["(BM/TM)*(BN/TN)"]
ARGS = [f"int32={M}", f"int32={N}", f"int32={K}", "float32=1", f"float32[{M * K}]", f"float32[{K * N}]", "float32=0",
        f"float32[{M * N}]:zeros@out"]
FLOPS = 2.0 * M * N * K
KERNEL = "gemm<BM,BN,BK,TM,TN>"
SOURCE = "examples/tune/gemm.cu"
CONSTANTS = {"M": M, "N": N, "K": K}
POLICY = {"noise_target": 0.01, "min_time_s": 0.05, "max_time_s": 1.0, "min_samples": 10}
