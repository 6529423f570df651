"""Issue 27's pattern kernels (tests/access/ptx/issue27_patterns.cu) on the GPU under Nsight Compute:
per-instruction counters of every source line, for the CPU tests that compare the compiled access
model with them line by line (tests/access/test_ptx_issue27.py).

Usage (repository root, a GPU machine with nvcc, ncu and CuPy):
    python3 benchmarks/model/issue27_patterns_gpu.py run OUTDIR      # build, launch under ncu, export
    python3 benchmarks/model/issue27_patterns_gpu.py launch CUBIN    # (what ncu runs) launch every PLAN entry once
    python3 benchmarks/model/issue27_patterns_gpu.py plan            # print the plan (CPU)

``run``: ``nvcc -cubin -lineinfo -arch=sm_90``; ``ncu --section SourceCounters --clock-control none``
over one process that launches each kernel of :data:`PLAN` once with its launch and inputs; then
``ncu --import --csv --page source --print-source cuda,sass --print-kernel-base mangled``. Writes
OUTDIR/issue27.cuda_sass.csv, OUTDIR/machine.txt and OUTDIR/steps.txt (fewer than 8 files, as the
device tool brings back).
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "access" / "ptx" / "issue27_patterns.cu"

#: buffer inputs: ("zeros"|"ones"|"arange"|"cdf8"|"u_unit"|"scrambled"|"lud", dtype, elements); scalars: (dtype, value)
PLAN: tuple[dict, ...] = (
    # particle filter resampling: a cdf that reaches 1 within 8 entries, u rising over the particles
    {"kernel": "find_index", "grid": (8, 1, 1), "block": (128, 1, 1), "smem": 0,
     "args": [("arange", "f8", 1000), ("cdf8", "f8", 1000), ("u_unit", "f8", 1000), ("zeros", "f8", 1000),
              ("i4", 1000)]},
    # backprop: 16 x 16 blocks, hid = 16 (the program's value)
    {"kernel": "hid_index", "grid": (1, 4, 1), "block": (16, 16, 1), "smem": 0,
     "args": [("ones", "f4", 17 * 16 * 5 + 64), ("zeros", "f4", 17 * 16 * 5 + 64), ("i4", 16)]},
    # LU diagonal: <<<1, 16>>> on a 64 x 64 matrix at offset 0
    {"kernel": "lud_diagonal", "grid": (1, 1, 1), "block": (16, 1, 1), "smem": 0,
     "args": [("lud", "f4", 64 * 64), ("i4", 64), ("i4", 0)]},
    # predicated shared accesses: k = 40 of 128 threads (warp 0 all on, warp 1 8 lanes, warps 2-3 none)
    {"kernel": "predicated_shared", "grid": (2, 1, 1), "block": (128, 1, 1), "smem": 0,
     "args": [("arange", "f4", 256), ("zeros", "f4", 256), ("i4", 40)]},
    # cuda-samples reduce1: 256 threads, 1 KiB of dynamic shared memory, n = 2048
    {"kernel": "reduce1", "grid": (8, 1, 1), "block": (256, 1, 1), "smem": 1024,
     "args": [("ones", "f4", 2048), ("zeros", "f4", 8), ("u4", 2048)]},
    {"kernel": "cast_shared", "grid": (2, 1, 1), "block": (128, 1, 1), "smem": 1024,
     "args": [("arange", "f4", 256), ("zeros", "f4", 256)]},
    # a compare-and-swap decided by the data: scrambled values, about half the lanes swap
    {"kernel": "gated_swap", "grid": (2, 1, 1), "block": (256, 1, 1), "smem": 0,
     "args": [("scrambled", "f4", 512), ("zeros", "f4", 512)]},
    # session 8: lavaMD's unrolled fill of 100 32-byte elements by 128 threads
    {"kernel": "unrolled_fill", "grid": (2, 1, 1), "block": (128, 1, 1), "smem": 0,
     "args": [("arange", "f8", 400), ("zeros", "f8", 256)]},
    # session 8: particlefilter's guarded 8-byte store, n = 1000 over 2 x 512 threads (one 8-lane warp)
    {"kernel": "edge_store", "grid": (2, 1, 1), "block": (512, 1, 1), "smem": 0,
     "args": [("arange", "f8", 1024), ("zeros", "f8", 1024), ("i4", 1000)]},
    # session 8: srad_v2's row edge, a 16 x 16 block reading one float per row, cols = 256
    {"kernel": "row_edge", "grid": (1, 1, 1), "block": (16, 16, 1), "smem": 0,
     "args": [("arange", "f4", 16 * 256), ("zeros", "f4", 256), ("i4", 256)]},
)


def host_array(kind: str, dtype: str, n: int):
    """The input array of a plan entry (numpy)."""
    import numpy as np  # noqa: PLC0415

    if kind == "zeros":
        return np.zeros(n, dtype)
    if kind == "ones":
        return np.ones(n, dtype)
    if kind == "arange":
        return np.arange(n).astype(dtype)
    if kind == "cdf8":  # cumulative weights concentrated on the first 8 particles
        return np.minimum(1.0, (np.arange(n) + 1) / 8.0).astype(dtype)
    if kind == "u_unit":  # u[i] = (i + 0.5) / n, as the resampling's systematic draws
        return ((np.arange(n) + 0.5) / n).astype(dtype)
    if kind == "scrambled":  # (37 i) mod 101: no order between i and i + 128
        return ((np.arange(n) * 37) % 101).astype(dtype)
    if kind == "lud":  # diagonally dominant, so the elimination stays finite
        side = int(round(n ** 0.5))
        return (np.ones((side, side)) + side * np.eye(side)).astype(dtype).ravel()
    raise ValueError(f"unknown input kind {kind!r}")


def _pack(arg, ptr: int | None) -> bytes:
    if ptr is not None:
        return struct.pack("<Q", ptr)
    dtype, value = arg
    return struct.pack({"i4": "<i", "u4": "<I", "f4": "<f"}[dtype], value)


def launch(cubin: Path) -> int:
    """Launch every plan entry once (run under ncu)."""
    import ctypes  # noqa: PLC0415

    import cupy as cp  # noqa: PLC0415

    mod = cp.cuda.function.Module()
    mod.load_file(str(cubin))
    for entry in PLAN:
        bufs, blobs = [], []
        for arg in entry["args"]:
            if len(arg) == 3:
                bufs.append(cp.asarray(host_array(*arg)))
                blobs.append(_pack(arg, int(bufs[-1].data.ptr)))
            else:
                blobs.append(_pack(arg, None))
        holders = [ctypes.create_string_buffer(b, len(b)) for b in blobs]
        ptrs = (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders])
        f = mod.get_function(entry["kernel"])
        cp.cuda.driver.launchKernel(f.ptr, *entry["grid"], *entry["block"], entry["smem"], 0,
                                    ctypes.addressof(ptrs), 0)
        cp.cuda.runtime.deviceSynchronize()
        sys.stdout.write(f"OK {entry['kernel']}\n")
        sys.stdout.flush()
    return 0


def commands(ncu: str, nvcc: str, cubin: Path, rep: Path) -> list[list[str]]:
    """The build, profile and export command lines, in order (the export's stdout is the CSV)."""
    return [
        [nvcc, "-cubin", "-lineinfo", "-arch=sm_90", "-o", str(cubin), str(SOURCE)],
        [ncu, "--section", "SourceCounters", "--clock-control", "none", "--force-overwrite", "-o", str(rep),
         sys.executable, str(Path(__file__).resolve()), "launch", str(cubin)],
        [ncu, "--import", str(rep), "--csv", "--page", "source", "--print-source", "cuda,sass",
         "--print-kernel-base", "mangled"],
    ]


def run(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    tmp = Path(tempfile.mkdtemp(prefix="issue27-"))
    cubin, rep = tmp / "issue27.cubin", tmp / "issue27.ncu-rep"
    steps = []
    machine = [time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())]
    for cmd in (["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], [ncu, "--version"],
                [nvcc, "--version"]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        machine.append((p.stdout.strip().splitlines() or [p.stderr.strip()])[-1])
    (out / "machine.txt").write_text("\n".join(machine) + "\n")
    rc = 0
    for k, cmd in enumerate(commands(ncu, nvcc, cubin, rep)):
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
        steps.append({"cmd": cmd, "rc": p.returncode, "seconds": round(time.time() - t0, 1),
                      "tail": (p.stdout[-1500:] if k < 2 else "") + p.stderr[-1500:]})
        if k == 2:
            (out / "issue27.cuda_sass.csv").write_text(p.stdout)
        if p.returncode != 0:
            rc = 1
            break
    (out / "steps.txt").write_text(json.dumps({"plan": PLAN, "steps": steps}, indent=1, default=list))
    sys.stdout.write(json.dumps([(s["rc"], s["seconds"]) for s in steps]) + "\n")
    return rc


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "run":
        return run(Path(argv[1]))
    if len(argv) == 2 and argv[0] == "launch":
        return launch(Path(argv[1]))
    if argv == ["plan"]:
        sys.stdout.write(json.dumps(PLAN, indent=1, default=list) + "\n")
        return 0
    sys.stderr.write("usage: issue27_patterns_gpu.py run OUTDIR | launch CUBIN | plan\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
