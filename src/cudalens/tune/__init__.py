"""cudalens.tune: autotuning that the models prune, on one GPU or many through Ray.

Python API (the CLI's ``cudalens tune`` calls the same)::

    from cudalens.tune import tune, make_space
    space = make_space({"BM": [64, 128], "BN": [64, 128], "BK": [8, 16], "TM": [4, 8], "TN": [4, 8]},
                       restrictions=["(BM*BK) % ((BM/TM)*(BN/TN)) == 0"], constants={"M": 2048, "N": 2048, "K": 2048})
    report = tune("gemm.cu", "gemm<BM,BN,BK,TM,TN>", space, grid=["N/BN", "M/BM"], block=["(BM/TM)*(BN/TN)"],
                  args=["int32=2048", "int32=2048", "int32=2048", "float32=1", "float32[2048*2048]",
                        "float32[2048*2048]", "float32=0", "float32[2048*2048]:zeros@out"])

Modules: space (parameters, restrictions), expr (the safe expression grammar), build (compile per
configuration, process pool), prune (the models' verdicts), strategies (exhaustive, guided,
optuna), runners (GPU and fake), store (sessions in the history database), engine (the loop),
report (best configuration and ranking stability), ray_backend (the optional Ray extra).
"""

from __future__ import annotations

from cudalens.tune.api import tune
from cudalens.tune.space import Config, Space, make_space

__all__ = ["Config", "Space", "make_space", "tune"]
