"""Launched under Nsight Compute by measure_gpu.py: runs each planned kernel N times, nothing else.

Usage: python benchmarks/measure/_ncu_driver.py PLAN.json
PLAN: {"source": path, "launches": N, "configs": [{"kernel", "grid", "block", "args": [spec...]}],
       "flush": false}
With "flush": true, every launch is preceded by the harness's own L2 flush (cudalens_l2_flush reading
a buffer of twice the L2 size), so ncu (run with --cache-control none) times exactly the launches the
harness times in cold mode.
"""

import json
import sys

import numpy as np

from cudalens.compiled.runtime_compile import compile_kernel
from cudalens.hardware import cuda_driver as cu
from cudalens.measure.argspec import materialize, parse_args
from cudalens.measure.devargs import ArgSets
from cudalens.measure.harness import L2Flush


def main(plan_path: str) -> int:
    plan = json.load(open(plan_path))
    src = open(plan["source"]).read()
    rng = np.random.default_rng(0)
    with cu.device_context(0) as ctx, cu.Stream() as stream:
        kernels = {}
        flush = (L2Flush(ctx, cu.device_attribute(cu.cu_device(0), "L2_CACHE_SIZE"), stream)
                 if plan.get("flush") else None)
        for cfg in plan["configs"]:
            name = cfg["kernel"]
            if name not in kernels:
                kernels[name] = compile_kernel(src, name, ctx.cc, options=())
            sets = ArgSets(cu, [materialize(spec, rng) for spec in parse_args(cfg["args"])], 1)
            packed = sets.packed[0]
            for _ in range(plan["launches"]):
                if flush is not None:
                    flush.launch(stream)
                cu.launch(kernels[name], tuple(cfg["grid"]), tuple(cfg["block"]), packed, stream)
            stream.synchronize()
            sets.close()
        if flush is not None:
            flush.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
