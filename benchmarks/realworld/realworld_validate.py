"""Real-world validation of the compiled (PTX) warp access model against Nsight Compute's
per-instruction counters, per (kernel, source line, quantity).

Steps (CPU unless noted):
  python3 benchmarks/realworld/realworld_build.py .carry/realworld          # PTX + cubin of every TU (realworld_build.py)
  python3 benchmarks/realworld/realworld_validate.py plan .carry/realworld  # one launch per kernel -> plan.json
  [H100] python3 benchmarks/realworld/_realworld_driver.py .carry/realworld OUT  # launches under ncu, source pages
  python3 benchmarks/realworld/realworld_validate.py compare .carry/realworld OUT/source RESULTDIR

The plan gives every kernel a launch the generic launcher (benchmarks/realworld/_realworld_launch.py) can
make without the project's host code: every pointer parameter gets its own zero-filled 64 MiB
buffer, integers the value 256 (SGEMM: M = N = K = 256), floats 1.0, structs zero bytes; the block
comes from ``.reqntid``/``.maxntid`` or the project's launch (SGEMM's runner), else 256 threads
(32 x 8 when the kernel reads %tid.y, 8 x 8 x 4 with %tid.z); small grids. Kernels that need what
such a launch cannot give (texture/surface objects, grid-wide cooperative launch, dynamic
parallelism, tensor maps) are listed with the reason and not launched. The model is given the
same launch (as a user gives --block/--define), evaluates every block of the grid, and its
predictions are compared with the counters of the SASS instructions of the same source line.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

from cudalens.compiled.names import demangle_all
from cudalens.compiled.ptx import parse_ptx
from cudalens.compiled.toolchain import discover

INT_VALUE = 256
BUFFER_BYTES = 64 << 20
DYN_SMEM = 16384
SGEMM_BLOCKS = {  # from siboehm/SGEMM_CUDA src/runner.cu (the kernels' own launches)
    "sgemm_naive": (32, 32, 1), "sgemm_global_mem_coalesce": (1024, 1, 1), "sgemm_shared_mem_block": (1024, 1, 1),
    "sgemm1DBlocktiling": (512, 1, 1), "sgemm2DBlocktiling": (256, 1, 1), "sgemmVectorize": (256, 1, 1),
    "sgemmResolveBankConflicts": (256, 1, 1), "sgemmResolveBankExtraCol": (256, 1, 1), "sgemmAutotuned": (256, 1, 1),
    "sgemmWarptiling": (128, 1, 1), "sgemmDoubleBuffering": (256, 1, 1),
}
SGEMM_GRIDS = {"sgemm_naive": (8, 8, 1), "sgemm_global_mem_coalesce": (8, 8, 1), "sgemm_shared_mem_block": (8, 8, 1),
               "sgemm1DBlocktiling": (4, 4, 1), "sgemmDoubleBuffering": (1, 2, 1)}
_SKIP_OPS = {"tex": "texture fetch (needs a texture object)", "tld4": "texture gather", "suld": "surface load",
             "sust": "surface store", "cp.async.bulk.tensor": "tensor map (TMA)", "wgmma": "wgmma (needs tensor maps)"}
_SKIP_CALLS = {"cudaCGSynchronizeGrid": "grid-wide sync (cooperative launch)", "cudaLaunchDevice":
               "dynamic parallelism", "cudaGetParameterBufferV2": "dynamic parallelism",
               "cudaCGGetIntrinsicHandle": "grid group (cooperative launch)", "malloc": "device malloc"}


def _param_kinds(fn, demangled: str | None) -> list[str]:
    """'ptr' | 'int' | 'float' | 'bytes' per parameter."""
    used_as_ptr: set[str] = set()
    loaded: dict[str, str] = {}
    for ins in fn.instructions:
        if ins.base == "ld" and "param" in ins.parts and len(ins.operands) == 2:
            loaded[ins.operands[0]] = ins.operands[1].strip("[]").split("+")[0]
        if ins.base == "cvta" and len(ins.operands) == 2 and ins.operands[1] in loaded:
            used_as_ptr.add(loaded[ins.operands[1]])
        if ins.base in ("ld", "st") and "param" not in ins.parts:
            tok = ins.operands[1] if ins.base == "ld" else ins.operands[0]
            reg = tok.strip("[]").split("+")[0]
            if reg in loaded:
                used_as_ptr.add(loaded[reg])
    sig: list[str] | None = None
    if demangled and "(" in demangled:
        inner = demangled[demangled.index("(") + 1: demangled.rindex(")")]
        depth, cur, sig = 0, "", []
        for ch in inner:
            depth += ch in "<(" and 1 or (-1 if ch in ">)" else 0)
            if ch == "," and depth == 0:
                sig.append(cur.strip())
                cur = ""
            else:
                cur += ch
        if cur.strip():
            sig.append(cur.strip())
    out = []
    for k, p in enumerate(fn.params):
        t = sig[k] if sig and k < len(sig) and len(sig) == len(fn.params) else ""
        if p.is_array:
            out.append("bytes")
        elif p.type in (".f32", ".f64"):
            out.append("float")
        elif t.endswith("*") or p.name in used_as_ptr:
            out.append("ptr")
        elif t and any(w in t for w in ("float", "double")) and p.type in (".b32", ".b64"):
            out.append("float")
        else:
            out.append("int")
    return out


def _uses(fn, reg: str) -> bool:
    return any(reg in ins.operands for ins in fn.instructions)


def plan_kernel(fn, module, demangled: str | None, project: str) -> dict:
    base = re.sub(r"\(.*", "", demangled or fn.name).split("<")[0].split("::")[-1].split()[-1]
    rec: dict = {"name": fn.name, "demangled": demangled, "base": base}
    for ins in fn.instructions:
        for key, why in _SKIP_OPS.items():
            if ins.opcode.startswith(key):
                rec["skip"] = why
        if ins.base == "call":
            for key, why in _SKIP_CALLS.items():
                if any(key in o for o in ins.operands):
                    rec["skip"] = why
    kinds = _param_kinds(fn, demangled)
    if any(k == "bytes" and p.size > 256 for k, p in zip(kinds, fn.params)):
        rec["skip"] = "large struct parameter"
    if demangled and any(w in demangled for w in ("cudaTextureObject", "cudaSurfaceObject", "CUtensorMap")):
        rec["skip"] = "texture/surface/tensor-map parameter"
    params = []
    for k, p in zip(kinds, fn.params):
        if k == "ptr":
            params.append({"kind": "ptr", "size": 8})
        elif k == "float":
            params.append({"kind": "f64" if p.size == 8 else "f32", "size": p.size, "value": 1.0})
        elif k == "bytes":
            params.append({"kind": "bytes", "size": p.size, "value": 0})
        else:
            params.append({"kind": f"i{8 * p.size}", "size": p.size, "value": INT_VALUE if p.size > 1 else 100})
    if project == "SGEMM_CUDA" and base in SGEMM_BLOCKS:
        block = SGEMM_BLOCKS[base]
        grid = SGEMM_GRIDS.get(base, (2, 2, 1))
    else:
        uses_y, uses_z = _uses(fn, "%tid.y"), _uses(fn, "%tid.z")
        if fn.reqntid:
            block = tuple((list(fn.reqntid) + [1, 1])[:3])
        elif fn.maxntid and fn.maxntid[0] * (fn.maxntid[1] if len(fn.maxntid) > 1 else 1) <= 1024:
            nt = fn.maxntid[0] * (fn.maxntid[1] if len(fn.maxntid) > 1 else 1)
            block = (32, max(nt // 32, 1), 1) if uses_y and len(fn.maxntid) == 1 else tuple((list(fn.maxntid) + [1, 1])[:3])
        else:
            block = (8, 8, 4) if uses_z else (32, 8, 1) if uses_y else (256, 1, 1)
        cy, cz = _uses(fn, "%ctaid.y"), _uses(fn, "%ctaid.z")
        grid = (2, 2, 2) if cz else (4, 4, 1) if cy else (8, 1, 1)
    static = sum(d.size or 0 for d in (*module.globals, *fn.locals) if d.space == "shared")
    dynamic = any(d.size is None and d.space == "shared" for d in (*module.globals, *fn.locals))
    smem = min(DYN_SMEM, max(0, 48 * 1024 - static)) if dynamic else 0
    if static > 48 * 1024:
        rec["skip"] = "static shared memory above 48 KiB"
    rec.update(block=list(block), grid=list(grid), smem=smem, params=params)
    return rec


def make_plan(root: Path) -> dict:
    build = json.loads((root / "build.json").read_text())
    tc = discover()
    plan: dict = {"int_value": INT_VALUE, "buffer_bytes": BUFFER_BYTES, "units": []}
    for rec in build:
        if "ptx" not in rec:
            continue
        module = parse_ptx((root / rec["ptx"]).read_text(errors="replace"))
        names = [f.name for f in module.entries]
        dem = demangle_all(names, tc.demangler) if names else {}
        kernels = [plan_kernel(f, module, dem.get(f.name), rec["project"]) for f in module.entries]
        plan["units"].append({"tu": rec["tu"], "project": rec["project"], "source": rec["source"], "ptx": rec["ptx"],
                              "cubin": rec["cubin"], "kernels": kernels})
    return plan


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write(__doc__ or "")
        return 2
    cmd = argv[0]
    if cmd == "plan":
        root = Path(argv[1])
        t0 = time.perf_counter()
        plan = make_plan(root)
        (root / "plan.json").write_text(json.dumps(plan, indent=1))
        n = sum(len(u["kernels"]) for u in plan["units"])
        skipped = sum(1 for u in plan["units"] for k in u["kernels"] if "skip" in k)
        sys.stdout.write(f"{len(plan['units'])} TUs, {n} kernels, {skipped} not launchable "
                         f"({time.perf_counter() - t0:.1f} s)\n")
        return 0
    if cmd == "compare":
        from realworld_compare import compare_main  # type: ignore  # benchmarks/ is on sys.path when run as a script

        return compare_main(argv[1:])
    sys.stderr.write(f"unknown step {cmd!r}\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
