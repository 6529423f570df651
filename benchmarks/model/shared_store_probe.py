"""Shared-store wavefronts and allocated registers, as ncu counts them (issue #7).

Usage (repository root):  PYTHONPATH=src python benchmarks/model/shared_store_probe.py OUTDIR

Question 1: the lab validation measured 1.08-1.2 wavefronts per request for unit-stride tile stores
(``t[ty][tx] = a[...]``) where the address model says 1, and 1.000 for the same store with 16 blocks.
Address pattern or something else? The probe stores conflict-free and 2-way-conflicting tiles, fed
from registers or straight from global loads, at 16, 2,048 and 16,384 blocks, and reads ncu's
hardware counters (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st, ..._bank_conflicts_...) beside
its per-instruction SASS counters (smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared[_ideal]), which
ncu derives from the addresses each instruction accessed.

Question 2: ncu's launch__registers_per_thread said 16 wherever ptxas said 8-15. The probe records
the driver's CU_FUNC_ATTRIBUTE_NUM_REGS beside ncu's value for kernels that need few registers.

Writes OUTDIR/shared_store_probe.json and prints a table. Never changes clocks.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(os.path.dirname(HERE)), "src")
KERNELS = os.path.join(HERE, "shared_store_probe.cu")
MEASURE = os.path.join(os.path.dirname(HERE), "measure")  # measure_kernels.cu, _ncu_driver.py
sys.path.insert(0, SRC)

from cudalens.errors import InputError  # noqa: E402
from cudalens.profile.ncu import parse_csv  # noqa: E402

GRIDS = (16, 2048, 16384)
#: kernel -> (wavefronts per store request the address model predicts, reads global memory)
PROBES = {"st_const": (1, False), "st_global": (1, True), "st_const_2way": (2, False), "st_global_2way": (2, True)}
WANTED = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "launch__registers_per_thread",
    "gpu__time_duration.sum",
]


def available(ncu: str) -> set[str]:
    p = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=60)
    return {ln.split()[0] for ln in p.stdout.splitlines() if ln.strip() and "__" in ln.split()[0]}


def driver_registers() -> dict[str, int]:
    from cudalens.compiled.runtime_compile import compile_kernel
    from cudalens.hardware import cuda_driver as cu

    out = {}
    with cu.device_context(0) as ctx:
        drv = cu._driver()
        for name in [*PROBES, "empty_kernel"]:
            src = open(KERNELS).read() if name != "empty_kernel" else open(os.path.join(MEASURE, "measure_kernels.cu")).read()
            k = compile_kernel(src, name, ctx.cc, options=())
            attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS
            out[name] = int(cu.check(drv.cuFuncGetAttribute(attr, k.function), "cuFuncGetAttribute"))
            k.unload()
    return out


def main(out_dir: str) -> int:
    os.makedirs(out_dir, exist_ok=True)
    ncu = shutil.which("ncu")
    if ncu is None:
        print("ncu not on PATH")
        return 1
    have = available(ncu)
    # --query-metrics lists the counters; launch__ and gpu__ metrics are always offered
    metrics = [m for m in WANTED if m.rsplit(".", 1)[0] in have or m.startswith(("launch__", "gpu__"))]
    missing = [m for m in WANTED if m not in metrics]
    configs = []
    for name, (_, reads) in PROBES.items():
        for g in GRIDS:
            n = g * 32 * 32
            args = ([f"float32[{n}]:rand"] if reads else []) + [f"float32[{n}]:zeros"]
            configs.append({"kernel": name, "grid": [g, 1, 1], "block": [32, 32, 1], "args": args})
    configs.append({"kernel": "empty_kernel", "grid": [1, 1, 1], "block": [32, 1, 1], "args": [],
                    "source": os.path.join(MEASURE, "measure_kernels.cu")})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    rows = []
    for cfg in configs:
        plan = os.path.join(out_dir, "plan.json")
        json.dump({"source": cfg.get("source", KERNELS), "launches": 1, "configs": [cfg]}, open(plan, "w"))
        log = os.path.join(out_dir, f"ncu_{cfg['kernel']}_{cfg['grid'][0]}.csv")
        cmd = [ncu, "--metrics", ",".join(metrics), "--csv", "--page", "raw", "--print-units", "base",
               "--clock-control", "none", "--log-file", log, sys.executable, os.path.join(MEASURE, "_ncu_driver.py"), plan]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        try:
            recs = parse_csv(open(log).read() if os.path.exists(log) else "", source=log)
        except InputError:
            recs = ()
        vals = {m: recs[0].metrics.get(m) for m in metrics} if recs else {}
        row = {"kernel": cfg["kernel"], "grid": cfg["grid"][0], "returncode": p.returncode, "metrics": vals,
               "predicted_store_wavefronts_per_request": PROBES.get(cfg["kernel"], (None,))[0]}
        if p.returncode != 0 or not vals:
            row["stderr_tail"] = p.stderr[-600:]
        st = vals.get("smsp__sass_inst_executed_op_shared_st.sum")
        if st:
            row["hw_store_wavefronts_per_request"] = (vals.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum") or 0) / st
            sass_st = vals.get("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
            if sass_st is not None:
                row["sass_store_wavefronts_per_request"] = sass_st / st
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "metrics"}), flush=True)
    regs = driver_registers()
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True).stdout.strip(),
        "command": "PYTHONPATH=src python benchmarks/model/shared_store_probe.py OUTDIR",
        "metrics": metrics, "metrics_not_offered": missing, "rows": rows,
        "registers": {k: {"driver_num_regs": v,
                          "ncu_registers_per_thread": next((r["metrics"].get("launch__registers_per_thread")
                                                            for r in rows if r["kernel"] == k and r["metrics"]), None)}
                      for k, v in regs.items()},
    }
    json.dump(result, open(os.path.join(out_dir, "shared_store_probe.json"), "w"), indent=1)
    print(json.dumps(result["registers"]))
    print("not offered:", missing)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")))
