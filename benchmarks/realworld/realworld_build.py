"""Build the real-world corpus for benchmarks/realworld/realworld_validate.py: PTX (-lineinfo) and a cubin made
from that PTX by ptxas, for sm_90, for every translation unit of the public projects that compiles
with the project's toolchain (cudalens.compiled.toolchain: the wheel nvcc). Runs on the CPU.

Usage: python3 benchmarks/realworld/realworld_build.py OUTDIR [--jobs N] [--project NAME]
Projects (checkouts outside the repo; see RULES): /work/ext/cuda-samples (NVIDIA/cuda-samples),
/work/ext/SGEMM_CUDA (siboehm/SGEMM_CUDA, through our benchmarks/realworld/sgemm_instances.cu),
/work/ext/code-samples (NVIDIA-developer-blog/code-samples), /work/ext/llm.c (karpathy/llm.c, its
dev/cuda kernel variants). Writes OUTDIR/<project>/<tu>.{ptx,cubin}
and OUTDIR/build.json (what compiled, what did not and why, seconds per TU).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cudalens.compiled.toolchain import discover

EXT = Path("/work/ext")
HERE = Path(__file__).resolve().parent


def units() -> list[tuple[str, Path, list[str]]]:
    """(project, .cu file, extra flags) for every translation unit tried."""
    out: list[tuple[str, Path, list[str]]] = []
    cs = EXT / "cuda-samples" / "Samples"
    for f in sorted(cs.rglob("*.cu")):
        if "8_Platform_Specific" in f.parts or "7_libNVVM" in f.parts:
            continue
        out.append(("cuda-samples", f, ["-I", str(cs.parent / "Common"), "-I", str(cs / "Common"), "-I", str(f.parent)]))
    sg = EXT / "SGEMM_CUDA" / "src"
    out.append(("SGEMM_CUDA", HERE / "sgemm_instances.cu",
                ["-I", str(sg), "-I", str(HERE / "stub_include")]))
    for f in sorted((EXT / "code-samples").rglob("*.cu")):
        out.append(("code-samples", f, ["-I", str(f.parent)]))
    llm = EXT / "llm.c" / "dev" / "cuda"  # karpathy/llm.c's kernel variants (cuBLAS headers from the wheels)
    for f in sorted(llm.glob("*.cu")):
        if f.stem != "nccl_all_reduce":  # needs NCCL and MPI
            out.append(("llm.c", f, ["-I", str(llm)]))
    # our own kernels (not counted as public code): the CPU tests' features, profiled for the fixture
    out.append(("own", HERE.parent / "tests" / "access" / "ptx" / "features.cu", []))
    return out


def build_one(project: str, src: Path, flags: list[str], outdir: Path, tc) -> dict:
    nvcc, ptxas = tc.get("nvcc").path, tc.get("ptxas").path
    parent = src.parent.parent.name if src.parent.name in ("src", "inc", "kernels") else src.parent.name
    stem = src.stem if project != "cuda-samples" else f"{parent}__{src.stem}"
    d = outdir / project
    d.mkdir(parents=True, exist_ok=True)
    ptx, cubin = d / f"{stem}.ptx", d / f"{stem}.cubin"
    t0 = time.perf_counter()
    if ptx.exists() and cubin.exists():  # built before (same sources, same flags)
        return {"project": project, "source": str(src), "tu": f"{project}/{stem}", "flags": flags, "ptx_seconds": None,
                "ptx": str(ptx.relative_to(outdir)), "cubin": str(cubin.relative_to(outdir))}
    rec = {"project": project, "source": str(src), "tu": f"{project}/{stem}", "flags": flags}
    p = subprocess.run([nvcc, "-ptx", "-lineinfo", "-arch=sm_90", "-std=c++17", *flags, str(src), "-o", str(ptx)],
                       capture_output=True, text=True, env=tc.env(), timeout=300)
    rec["ptx_seconds"] = round(time.perf_counter() - t0, 3)
    if p.returncode != 0 or not ptx.exists():
        rec["error"] = (p.stderr.strip().splitlines() or ["nvcc failed"])[0][:300]
        return rec
    if ".entry" not in ptx.read_text(errors="replace"):
        rec["error"] = "no kernels"
        return rec
    q = subprocess.run([ptxas, "-arch=sm_90", "-lineinfo", str(ptx), "-o", str(cubin)], capture_output=True,
                       text=True, env=tc.env(), timeout=300)
    if q.returncode != 0:
        rec["error"] = "ptxas: " + (q.stderr.strip().splitlines() or ["failed"])[0][:300]
        return rec
    rec["ptx"], rec["cubin"] = str(ptx.relative_to(outdir)), str(cubin.relative_to(outdir))
    return rec


def main(argv: list[str]) -> int:
    outdir = Path(argv[0])
    jobs = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else 2
    only = argv[argv.index("--project") + 1] if "--project" in argv else None
    tc = discover()
    todo = [u for u in units() if only is None or u[0] == only]
    with ThreadPoolExecutor(jobs) as ex:
        recs = list(ex.map(lambda u: build_one(*u, outdir, tc), todo))
    if only is not None and (outdir / "build.json").exists():  # merge into the earlier build
        old = [r for r in json.loads((outdir / "build.json").read_text()) if r["project"] != only]
        recs = old + recs
    (outdir / "build.json").write_text(json.dumps(recs, indent=1))
    ok = sum("ptx" in r for r in recs)
    sys.stdout.write(f"{ok} of {len(recs)} translation units built\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
