"""The injection library for native programs: find CUPTI, build ``inject.c`` once, cache it.

The CUDA driver loads the library named by ``CUDA_INJECTION64_PATH`` into every process that
initializes CUDA and calls its ``InitializeInjection``; the library enables CUPTI activity and
writes the records at exit. It is compiled at first use with the system's C compiler (``cc``)
against the CUPTI headers and library found here, and kept in cudalens' cache directory keyed by
the source and the CUPTI it was built against. NVTX ranges reach CUPTI when
``NVTX_INJECTION64_PATH`` names the CUPTI library, which :func:`nvtx_injection` gives.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from cudalens.errors import ToolchainError


def _wheel_libcupti() -> str | None:
    """The CUPTI library of an installed NVIDIA wheel (nvidia/*/lib/libcupti.so*) when exactly one is there:
    found by path, without importing cuda.pathfinder or loading the library (a few ms instead of ~0.4 s)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return None
    roots = list(spec.submodule_search_locations or []) if spec else []
    hits = {os.path.realpath(h) for r in roots for h in glob.glob(os.path.join(r, "*", "lib", "libcupti.so*"))}
    return hits.pop() if len(hits) == 1 else None


def find_libcupti() -> str | None:
    """The CUPTI shared library: the one CUDA's Python packages load (as cupti-python does), else a toolkit's."""
    wheel = _wheel_libcupti()
    if wheel:
        return wheel
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        path = load_nvidia_dynamic_lib("cupti").abs_path
        if path and os.path.exists(path):
            return os.path.realpath(path)
    except Exception:  # noqa: BLE001, S110 - not installed or not found: look in the toolkit
        pass
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if not root:
            continue
        for sub in ("extras/CUPTI/lib64", "lib64", "targets/x86_64-linux/lib"):
            hits = sorted(glob.glob(os.path.join(root, sub, "libcupti.so*")))
            if hits:
                return os.path.realpath(hits[0])
    return None


def find_cupti_include(lib: str) -> str | None:
    """A directory with cupti.h: beside the library first (same version), then the toolkit's."""
    libdir = os.path.dirname(lib)
    roots = [os.path.join(libdir, "..", "include"), os.path.join(libdir, "..", "..", "include")]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            roots += [os.path.join(root, "extras", "CUPTI", "include"), os.path.join(root, "include")]
    for r in roots:
        if os.path.exists(os.path.join(r, "cupti.h")) and os.path.exists(os.path.join(r, "cuda.h")):
            return os.path.realpath(r)
    for r in roots:  # cupti.h without cuda.h beside it: the toolkit's include dir supplies cuda.h
        if os.path.exists(os.path.join(r, "cupti.h")):
            return os.path.realpath(r)
    return None


def _cache_dir() -> Path:
    base = os.environ.get("CUDALENS_CACHE_DIR")
    if base:
        return Path(base) / "inject"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "cudalens" / "inject"


def _toolkit_roots() -> list[str]:
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    roots.append("/usr/local/cuda")
    return [r for r in dict.fromkeys(roots) if r and os.path.isdir(os.path.join(r, "include"))]


def include_candidates(include: str) -> list[list[str]]:
    """Include-directory sets to try, most self-consistent first: a toolkit's own headers (cupti.h
    and cuda.h of one release), then the headers beside the CUPTI library with a toolkit's for the
    rest (a Python package's include folder may hold cupti.h without CUDA's crt/ headers)."""
    sets: list[list[str]] = []
    for root in _toolkit_roots():
        dirs = [d for d in (os.path.join(root, "extras", "CUPTI", "include"), os.path.join(root, "include"))
                if os.path.isdir(d)]
        if any(os.path.exists(os.path.join(d, "cupti_activity.h")) for d in dirs):
            sets.append(dirs)
    sets.append([include] + [os.path.join(r, "include") for r in _toolkit_roots()])
    sets.append([include])
    out: list[list[str]] = []
    for s in sets:
        if s not in out:
            out.append(s)
    return out


def build(timeout: float = 120.0) -> str:
    """Path of the built injection library (built now if not cached); ToolchainError says what is missing."""
    lib = find_libcupti()
    if lib is None:
        raise ToolchainError("CUPTI (libcupti.so) was not found: install the nvidia-cuda-cupti package or a CUDA "
                             "toolkit, or set CUDA_HOME")
    include = find_cupti_include(lib)
    if include is None:
        raise ToolchainError(f"CUPTI headers (cupti.h) were not found for {lib}: install a CUDA toolkit with CUPTI "
                             "or set CUDA_HOME")
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise ToolchainError("no C compiler (cc, gcc or clang) to build the tracing library for native programs")
    source = resources.files("cudalens.trace").joinpath("inject.c").read_bytes()
    key = hashlib.sha256(source + lib.encode() + include.encode()).hexdigest()[:16]
    out_dir = _cache_dir()
    target = out_dir / f"libcudalens_inject-{key}.so"
    if target.exists():
        return str(target)
    out_dir.mkdir(parents=True, exist_ok=True)
    src_path = out_dir / f"inject-{key}.c"
    src_path.write_bytes(source)
    tmp = out_dir / f".{target.name}.{os.getpid()}"
    libdir = os.path.dirname(lib)
    errors = []
    for dirs in include_candidates(include):
        incs = [arg for d in dirs for arg in ("-I", d)]
        cmd = [cc, "-shared", "-fPIC", "-O2", *incs, str(src_path), "-o", str(tmp), lib,
               f"-Wl,-rpath,{libdir}", "-lpthread"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ToolchainError(f"building the tracing library failed: {exc}") from None
        if proc.returncode == 0:
            break
        errors.append(next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200]))
    else:
        raise ToolchainError(f"building the tracing library with {cc} failed: {errors[0] if errors else '?'}")
    os.replace(tmp, target)
    return str(target)


def nvtx_injection() -> str | None:
    """The library to name in NVTX_INJECTION64_PATH so NVTX ranges become CUPTI marker records."""
    return find_libcupti()
