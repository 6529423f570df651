#!/usr/bin/env python3
"""Validate the warp access model against Nsight Compute counters on a real GPU.

For every kernel of examples/access/ this script builds a small host driver (the example file is
#included; its own main() is renamed away), compiles it with ``nvcc -arch=sm_90 -lineinfo``, runs
it under ``ncu`` once per file (all launches of that file profiled in order) and compares:

- global loads:  l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / l1tex__t_requests_..._ld.sum
- global stores: the same with _st
- shared loads/stores: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum /
  smsp__sass_inst_executed_op_shared_{ld,st}.sum  (the model's wavefronts_per_request)

with the model's prediction for the same launch (block, parameter values). A comparison is made only
where every access of that kind in the kernel has the same predicted figure (otherwise the counter
is a mixture and the row says "mixed"). Never changes clocks or power settings.

Usage (from the repo root):  PYTHONPATH=src python benchmarks/model/access_gpu.py [OUT_DIR]
Writes OUT_DIR/access_validation.json and prints a summary table last.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from cudalens.access.model import analyze_model  # noqa: E402
from cudalens.source.parse import parse_file  # noqa: E402

EX = ROOT / "examples" / "access"
METRICS = [
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
]

# (file, kernel, int parameter values, block, grid)
CASES: list[tuple[str, str, dict, tuple, tuple]] = (
    [("offset_copy.cu", "offset_copy", {"offset": o}, (256, 1, 1), (64, 1, 1)) for o in range(33)]
    + [("stride_copy.cu", "stride_copy", {"stride": s}, (256, 1, 1), (64, 1, 1)) for s in range(1, 33)]
    + [("matmul.cu", k, {"N": 128}, (32, 32, 1), (4, 4, 1)) for k in ("ab_naive", "ab_tile_a", "ab_tile_ab")]
    + [("aat.cu", k, {"M": 128}, (32, 32, 1), (4, 4, 1)) for k in ("aat_naive", "aat_tiled", "aat_tiled_padded")]
    + [("transpose.cu", k, {"W": 256}, (32, 32, 1), (8, 8, 1)) for k in ("transpose_tile", "transpose_tile_padded")]
    + [("divergence.cu", k, {}, (256, 1, 1), (64, 1, 1)) for k in ("split_by_thread", "split_by_warp")]
    + [("constant.cu", k, {}, (256, 1, 1), (64, 1, 1)) for k in ("uniform_weight", "per_lane_weight")]
    + [("wide.cu", k, {}, (256, 1, 1), (64, 1, 1)) for k in ("shared_double", "shared_float4")]
)
BUFFER_BYTES = 64 << 20


def run(cmd: list[str], timeout: int = 200) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise SystemExit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


def driver_source(file: str, cases: list, kernels: dict) -> str:
    lines = ["#define main cudalens_example_main", f'#include "{EX / file}"', "#undef main", "#include <cstdio>",
             "int main() {", "  void *buf[8];",
             f"  for (int i = 0; i < 8; ++i) {{ if (cudaMalloc(&buf[i], {BUFFER_BYTES}) != cudaSuccess) return 3;"
             f" cudaMemset(buf[i], 0, {BUFFER_BYTES}); }}"]
    for _f, kname, ints, block, grid in cases:
        k = kernels[kname]
        args, nptr = [], 0
        for p in k.params:
            if p.is_pointer:
                t = p.type.replace("__restrict__", "").strip()
                args.append(f"({t})((char*)buf[{nptr}] + {BUFFER_BYTES // 4})")  # room for negative offsets
                nptr += 1
            else:
                args.append(str(ints.get(p.name, 0)))
        lines.append(f"  {kname}<<<dim3{grid}, dim3{block}>>>({', '.join(args)});")
        lines.append("  if (cudaDeviceSynchronize() != cudaSuccess) { printf(\"launch failed\\n\"); return 4; }")
    lines += ["  for (int i = 0; i < 8; ++i) cudaFree(buf[i]);", "  printf(\"ok\\n\");", "  return 0;", "}"]
    return "\n".join(lines) + "\n"


def _compiled_kernel(file: str, kname: str):
    """The kernel as nvcc compiled it (for the SASS widths of shared loads), or None."""
    try:
        from cudalens.compiled import compile_file  # noqa: PLC0415

        return compile_file(EX / file, cc="9.0").kernels.get(kname)
    except Exception:  # noqa: BLE001 - no toolchain: source figures only
        return None


def predictions(file: str, kname: str, ints: dict, block: tuple) -> dict:
    """Per (space, op): one figure when every access agrees; for shared loads the compiler vectorized
    (LDS.64/128 on the line) the compiled figure, and when a kernel's shared loads differ but sit in
    one loop nest, their mean weighted by requests; else "mixed"."""
    from cudalens.evidence.join import compiled_shared_loads  # noqa: PLC0415

    m = analyze_model(parse_file(EX / file), block=block, defines=ints)
    k = next(k for k in m.kernels if k.name == kname)
    ck = _compiled_kernel(file, kname)
    compiled = compiled_shared_loads(k.accesses, ck) if ck is not None else [(a, a.wavefronts_per_request, 1.0)
                                                                              for a in k.accesses]
    out = {}
    for space, op, key in (("global", "load", "global_ld_sectors_per_request"),
                           ("global", "store", "global_st_sectors_per_request"),
                           ("shared", "load", "shared_ld_wavefronts_per_request"),
                           ("shared", "store", "shared_st_wavefronts_per_request")):
        rows = [(a.sectors_per_request if space == "global" else wf, w, a.loop_lines)
                for a, wf, w in compiled if a.space == space and a.op == op]
        vals = {v for v, _w, _l in rows}
        if not rows:
            out[key] = None
        elif len(vals) == 1 and None not in vals:
            out[key] = vals.pop()
        elif None not in vals and len({lines for _v, _w, lines in rows}) == 1:
            out[key] = round(sum(v * w for v, w, _l in rows) / sum(w for _v, w, _l in rows), 4)
        else:
            out[key] = "mixed"
    return out


def parse_ncu_csv(text: str) -> list[dict]:
    rows = list(csv.reader(io.StringIO(text[text.find('"ID"'):])))
    if not rows:
        return []
    head, data = rows[0], rows[1:]
    out = []
    for r in data:
        if len(r) != len(head) or not r[0].isdigit():
            continue  # the units row
        d = dict(zip(head, r))
        rec = {"kernel": d.get("Kernel Name", "")}
        for mname in METRICS:
            try:
                rec[mname] = float(d.get(mname, "nan").replace(",", ""))
            except ValueError:
                rec[mname] = None
        out.append(rec)
    return out


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def main() -> int:
    out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "access_out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    nvcc, ncu = shutil.which("nvcc"), shutil.which("ncu")
    if not nvcc or not ncu:
        raise SystemExit(f"needs nvcc and ncu on PATH (nvcc={nvcc}, ncu={ncu})")
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True)
    device, _, driver = smi.stdout.strip().partition(", ")
    results = []
    work = Path(tempfile.mkdtemp(prefix="cudalens_access_"))
    for file in dict.fromkeys(c[0] for c in CASES):
        cases = [c for c in CASES if c[0] == file]
        kernels = {k.name: k for k in parse_file(EX / file).kernels}
        src = work / f"drive_{Path(file).stem}.cu"
        src.write_text(driver_source(file, cases, kernels))
        exe = work / Path(file).stem
        run([nvcc, "-arch=sm_90", "-lineinfo", "-O3", "-o", str(exe), str(src)])
        prof = run([ncu, "--metrics", ",".join(METRICS), "--csv", "--page", "raw", str(exe)], timeout=230)
        rows = parse_ncu_csv(prof.stdout)
        if len(rows) != len(cases):
            raise SystemExit(f"{file}: expected {len(cases)} profiled launches, got {len(rows)}")
        for (f, kname, ints, block, grid), row in zip(cases, rows):
            pred = predictions(f, kname, ints, block)
            meas = {
                "global_ld_sectors_per_request": ratio(row[METRICS[0]], row[METRICS[1]]),
                "global_st_sectors_per_request": ratio(row[METRICS[2]], row[METRICS[3]]),
                "shared_ld_wavefronts_per_request": ratio(row[METRICS[4]], row[METRICS[8]]),
                "shared_st_wavefronts_per_request": ratio(row[METRICS[5]], row[METRICS[9]]),
            }
            for key, p in pred.items():
                m = meas[key]
                comparable = isinstance(p, (int, float)) and m is not None
                results.append({
                    "file": f, "kernel": kname, "params": ints, "block": block, "grid": grid, "quantity": key,
                    "predicted": p, "measured": None if m is None else round(m, 4),
                    "agree": (abs(p - m) <= 0.05 * max(p, 1)) if comparable else None,
                    "counters": {k: row[k] for k in METRICS},
                })
    doc = {
        "device": device, "driver": driver, "date": dt.datetime.now(dt.timezone.utc).isoformat(),
        "command": " ".join([sys.executable] + sys.argv), "metrics": METRICS, "tolerance": "5 %",
        "results": results,
    }
    (out_dir / "access_validation.json").write_text(json.dumps(doc, indent=2))
    compared = [r for r in results if r["agree"] is not None]
    agree = sum(r["agree"] for r in compared)
    print(f"{'kernel':<24}{'params':<16}{'quantity':<36}{'model':>8}{'ncu':>9}  agree")
    for r in compared:
        params = ",".join(f"{k}={v}" for k, v in r["params"].items())
        print(f"{r['kernel']:<24}{params:<16}{r['quantity']:<36}{r['predicted']:>8g}{r['measured']:>9g}  "
              f"{'yes' if r['agree'] else 'NO'}")
    print(f"\n{agree}/{len(compared)} comparisons agree (device {device}, driver {driver}); "
          f"wrote {out_dir / 'access_validation.json'}")
    return 0 if agree == len(compared) else 1


if __name__ == "__main__":
    sys.exit(main())
