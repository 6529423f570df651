"""How much of NVIDIA/cuda-samples `cudalens check` compiles, with the flags the samples' CMake uses.

    python benchmarks/check/cuda_samples_compile.py /path/to/cuda-samples [-j N] [-o RESULT.json]

1. Reads each sample folder's CMakeLists.txt for the flags it gives nvcc (the same for nearly all
   samples: ``--extended-lambda``, C++17 (``cuda_std_17``), separable compilation (``-rdc=true``),
   ``-Wno-deprecated-gpu-targets``, occasionally ``-maxrregcount``) and its include folders, and
   writes them as a compile_commands.json in a temporary folder (nothing is written into the
   checkout). ``-lineinfo``/``-G`` and the architectures are cudalens' own choice (``--cc 9.0``).
2. Runs ``cudalens check Samples --compile-commands that.json -I Common -j N --format json``
   (the real command, in a subprocess) and times it, with a fresh compile cache.
3. Counts the ``.cu`` translation units that compiled, and gives for each one that did not the
   missing piece in one line (a missing header, or the compiler's first error).

The result (counts, seconds, cores, the toolchain's header families, each failure) is written as
JSON; benchmarks/results/cpu/cuda_samples_compile.json is this script's output on the checkout
named in it. No GPU is needed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_speed as cs  # noqa: E402

_CUDA_FLAGS = re.compile(r'set\(CMAKE_CUDA_FLAGS\s+"\$\{CMAKE_CUDA_FLAGS\}\s+([^"]+)"\)')
_OPTIONS = re.compile(r"target_compile_options\(\s*\S+\s+(?:PRIVATE|PUBLIC|INTERFACE)\s+([^)]*)\)")
_GENEX = re.compile(r"\$<\$<COMPILE_LANGUAGE:CUDA>:([^>]*)>")
_INCLUDES = re.compile(r"(target_)?include_directories\(([^)]*)\)")
_IGNORED = {"-G", "-lineinfo", "-dc"}  # debug/line info and output kind are cudalens' own choice


def sample_flags(cmake: Path) -> list[str]:
    """The nvcc flags a sample's CMakeLists.txt gives its CUDA sources."""
    text = re.sub(r"#[^\n]*", "", cmake.read_text(errors="replace"))
    flags: list[str] = []
    for m in _CUDA_FLAGS.finditer(text):
        flags += [f for f in m.group(1).split() if f not in _IGNORED]
    for m in _OPTIONS.finditer(text):
        for g in _GENEX.findall(m.group(1)):
            flags += g.split()
    if "cuda_std_17" in text or "CUDA_STANDARD 17" in text:
        flags.append("-std=c++17")
    if re.search(r"CUDA_SEPARABLE_COMPILATION\s+ON", text):
        flags.append("-rdc=true")
    for m in _INCLUDES.finditer(text):
        words = m.group(2).split()[1 if m.group(1) else 0:]  # target_include_directories(TARGET ...)
        for word in words:
            if word in ("PRIVATE", "PUBLIC", "INTERFACE", "SYSTEM", "BEFORE", "AFTER") or "$" in word:
                continue
            flags.append("-I" + str((cmake.parent / word).resolve()))
    return list(dict.fromkeys(flags))


def compile_commands(root: Path) -> list[dict]:
    entries = []
    for cu in sorted(root.glob("Samples/**/*.cu")):
        cmake = next((d / "CMakeLists.txt" for d in [cu.parent, *cu.parents] if (d / "CMakeLists.txt").is_file()), None)
        flags = sample_flags(cmake) if cmake is not None and cmake.parent != root / "Samples" else []
        entries.append({"directory": str(cu.parent), "file": str(cu),
                        "arguments": ["nvcc", *flags, "-c", str(cu), "-o", cu.stem + ".o"]})
    return entries


_MISSING = re.compile(r"([\w./+-]+): No such file or directory")


def missing_piece(error: str) -> str:
    m = _MISSING.search(error)
    if m:
        return f"missing header {m.group(1)}"
    return error.split(": error: ", 1)[-1].strip()[:200]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("-o", "--output", type=Path, default=None)
    args = ap.parse_args()
    root = args.checkout.resolve()
    with tempfile.TemporaryDirectory(prefix="cudalens-samples-") as tmp:
        cc_json = Path(tmp) / "compile_commands.json"
        cc_json.write_text(json.dumps(compile_commands(root), indent=1))
        env = dict(os.environ, CUDALENS_CACHE_DIR=str(Path(tmp) / "cache"))
        cmd = [sys.executable, "-m", "cudalens", "check", str(root / "Samples"), "-I", str(root / "Common"),
               "--compile-commands", str(cc_json), "-j", str(args.jobs), "--cc", "9.0", "--format", "json",
               "--no-config"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        seconds = time.perf_counter() - t0
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        print(proc.stderr[-2000:], file=sys.stderr)
        return 1
    units = [f for f in data["files"] if f["path"].endswith(".cu")]
    failed = [f for f in units if not f["compiled"]]
    not_analyzed = [f for f in data.get("failed", []) if f["path"].endswith(".cu")]
    from cudalens.compiled.doctor import header_families

    math = re.compile(r'#\s*include\s*[<"](cublas|cublasLt|cufft|curand)', re.MULTILINE)
    uses_math = [f for f in units if f["compiled"] and any(
        math.search(p.read_text(errors="replace")) for p in [Path(f["path"]), *Path(f["path"]).parent.glob("*.h*")])]

    total = len(units) + len(not_analyzed)
    result = {
        "command": " ".join(["python", "benchmarks/check/cuda_samples_compile.py", "<cuda-samples>", "-j", str(args.jobs)]),
        "check_command": "cudalens check Samples -I Common --compile-commands <generated from each CMakeLists.txt> "
                         f"-j {args.jobs} --cc 9.0 --format json --no-config",
        "checkout": str(root),
        "commit": subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                 text=True, check=False).stdout.strip() or None,
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "host": platform.node(), "cores_used": args.jobs, "cores_available": os.cpu_count(),
        "seconds": round(seconds, 1),
        "cu_translation_units": total,
        "compiled": len(units) - len(failed),
        "compiled_fraction": round((len(units) - len(failed)) / total, 4) if total else None,
        "not_compiled": len(failed) + len(not_analyzed),
        "compiled_needing_cuda_libs": len(uses_math),  # include cuBLAS/cuFFT/cuRAND headers (the extra)
        "headers_cuh_analyzed": sum(1 for f in data["files"] if not f["path"].endswith(".cu")),
        "header_families": {k: v["from"] for k, v in header_families().items()},
        "failures": sorted([{"file": os.path.relpath(f["path"], root),
                             "missing": missing_piece(f["compile_error"] or "no compile error recorded")}
                            for f in failed] + [{"file": os.path.relpath(f["path"], root), "missing": f["error"]}
                                                for f in not_analyzed], key=lambda d: d["file"]),
        "exit_code": proc.returncode,
    }
    return cs.write_result(result, args.output, indent=2)


if __name__ == "__main__":
    sys.exit(main())
