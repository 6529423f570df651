"""Launched under Nsight Compute: each named kernel N times, the same launches the harness times.

Usage: python3 _named_ncu_driver.py PLAN.json
PLAN: {"launches": N, "state": "cold"|"hot", "configs": [named_kernels entries]}
cold: before every launch the harness's persisting-L2 reset and L2 flush (ncu --cache-control none);
hot: back-to-back launches.
"""

import json
import sys

import numpy as np

from cudalens.hardware import cuda_driver as cu
from cudalens.measure.argspec import materialize, parse_args
from cudalens.measure.devargs import ArgSets
from cudalens.measure.harness import L2Flush, _load
from cudalens.measure.kernels import BuildContext, NamedCubin, compile_named, normalize_name


def main(plan_path: str) -> int:
    plan = json.load(open(plan_path))
    rng = np.random.default_rng(0)
    drv = cu._driver()
    with cu.device_context(0) as ctx, cu.Stream() as stream:
        flush = (L2Flush(ctx, cu.device_attribute(cu.cu_device(0), "L2_CACHE_SIZE"), stream)
                 if plan["state"] == "cold" else None)
        for cfg in plan["configs"]:
            if "cubin" in cfg:  # compiled by the parent: the same cubin the harness timed
                compiled = NamedCubin(open(cfg["cubin"], "rb").read(), {normalize_name(cfg["kernel"]): cfg["symbol"]},
                                      "", "parent", ())
            else:
                compiled = compile_named(open(cfg["file"]).read(), cfg["kernel"], ctx.cc, origin=cfg["file"],
                                         build=BuildContext(include_dirs=tuple(cfg.get("include", ()))))
            kern = _load(cu, compiled, cfg["kernel"])
            host = [materialize(s, rng) for s in parse_args(cfg["args"])]
            sets = ArgSets(cu, host, 1)
            for _ in range(plan["launches"]):
                if flush is not None:
                    cu.check(drv.cuCtxResetPersistingL2Cache(), "reset")
                    flush.launch(stream)
                cu.launch(kern, tuple(cfg["grid"]), tuple(cfg["block"]), sets.packed[0], stream, cfg.get("smem", 0))
            stream.synchronize()
            sets.close()
            kern.unload()
        if flush is not None:
            flush.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
