"""Launched under Nsight Compute by validate_labs.py: loads one cubin, launches each planned kernel
once, nothing else. No timing here: ncu measures.

Usage: python benchmarks/model/_validate_driver.py PLAN.json
PLAN: {"cubin": path, "names": [kernel...], "buffers": n, "buffer_bytes": b,
       "launches": [{"kernel", "grid": [x,y,z], "block": [x,y,z], "smem": bytes,
                     "args": [["ptr", i] | ["i32", v] | ["u32", v] | ["i64", v] | ["u64", v] | ["f32", v]]}]}
"""

from __future__ import annotations

import json
import sys

import numpy as np

from cudalens.labs.runner import mangled_names

_SCALARS = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f32": np.float32,
            "f64": np.float64}


def _ck(result):
    err, rest = (result[0], result[1:]) if isinstance(result, tuple) else (result, ())
    if int(err) != 0:
        raise RuntimeError(f"CUDA call failed: {err}")
    return rest[0] if len(rest) == 1 else rest


def main(plan_path: str) -> int:
    from cuda.bindings import runtime as rt
    from cuda.core import Device, LaunchConfig, ObjectCode, launch

    plan = json.load(open(plan_path))
    dev = Device(0)
    dev.set_current()
    stream = dev.create_stream()
    data = open(plan["cubin"], "rb").read()
    # cuda.core wants the mangled symbols as bytes
    mapping = {k: v.encode() for k, v in mangled_names(data, plan["names"]).items()}
    obj = ObjectCode.from_cubin(data, name="lab", symbol_mapping=mapping)
    buffers = []
    for _ in range(plan["buffers"]):
        ptr = int(_ck(rt.cudaMalloc(int(plan["buffer_bytes"]))))
        _ck(rt.cudaMemset(ptr, 0, int(plan["buffer_bytes"])))
        buffers.append(ptr)
    _ck(rt.cudaDeviceSynchronize())
    kernels = {}
    for spec in plan["launches"]:
        name = spec["kernel"]
        if name not in kernels:
            kernels[name] = obj.get_kernel(name)
        args = [np.uint64(buffers[v]) if kind == "ptr" else _SCALARS[kind](v) for kind, v in spec["args"]]
        cfg = LaunchConfig(grid=tuple(spec["grid"]), block=tuple(spec["block"]), shmem_size=int(spec.get("smem", 0)))
        launch(stream, cfg, kernels[name], *args)
        stream.sync()
        print(f"launched {name}", flush=True)
    for ptr in buffers:
        rt.cudaFree(ptr)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
