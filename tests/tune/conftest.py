from __future__ import annotations

import pytest

SPACE = ["BM=32,64,128,256", "BN=32,64,128,256", "BK=8:32:x2", "TM=2,4,8", "TN=2,4,8"]
RESTRICT = ["(BM/TM)*(BN/TN) >= 32", "(BM/TM)*(BN/TN) <= 1024", "(BM*BK) % ((BM/TM)*(BN/TN)) == 0",
            "(BN*BK) % ((BM/TM)*(BN/TN)) == 0"]
CONSTS = ["M=2048", "N=2048", "K=2048"]


@pytest.fixture()
def gemm_space():
    from cudalens.tune import make_space

    return make_space(SPACE, RESTRICT, CONSTS)


@pytest.fixture()
def gemm_source(tmp_path):
    src = tmp_path / "gemm.cu"
    src.write_text("template <int BM, int BN, int BK, int TM, int TN>\n__global__ void gemm(float* c) {}\n")
    return str(src)
