"""What cudalens can use on this machine: CUDA tools, GPU and driver, Nsight Compute.

Library side of ``cudalens doctor``: returns plain data, never prints. Every probe is guarded, so
a machine without a GPU, driver or bindings reports that instead of failing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from cudalens.compiled.toolchain import (
    FIX_COMMANDS,
    TOOLS,
    Toolchain,
    discover,
    find_ncu,
)

#: Header families a kernel commonly includes: (a header that proves the family, what installs it).
#: The default install brings the first group; the math libraries' headers come with the
#: ``cuda-libs`` extra (versions pinned in pyproject.toml), or with a system CUDA.
HEADER_FAMILIES: dict[str, tuple[str, str]] = {
    "CUDA runtime": ("cuda_runtime.h", "pip install nvidia-cuda-runtime==13.0.96"),
    "fp16/bf16/fp8": ("cuda_bf16.h", "pip install nvidia-cuda-runtime==13.0.96"),
    "mma (WMMA)": ("mma.h", "pip install nvidia-cuda-nvcc==13.0.88"),
    "cooperative groups": ("cooperative_groups.h", "pip install nvidia-cuda-runtime==13.0.96"),
    "CCCL: libcu++ (cuda/std, cuda/pipeline)": ("cuda/pipeline", "pip install nvidia-cuda-cccl==13.0.85"),
    "CCCL: CUB": ("cub/cub.cuh", "pip install nvidia-cuda-cccl==13.0.85"),
    "CCCL: Thrust": ("thrust/device_vector.h", "pip install nvidia-cuda-cccl==13.0.85"),
    "CCCL: nv/target": ("nv/target", "pip install nvidia-cuda-cccl==13.0.85"),
    "profiler API": ("cuda_profiler_api.h", "pip install nvidia-cuda-profiler-api==13.0.85"),
    "NVRTC": ("nvrtc.h", "pip install nvidia-cuda-nvrtc==13.0.88"),
    "cuRAND (device and host)": ("curand_kernel.h", "pip install 'cudalens[cuda-libs]'  # nvidia-curand"),
    "cuBLAS": ("cublas_v2.h", "pip install 'cudalens[cuda-libs]'  # nvidia-cublas"),
    "cuBLASLt": ("cublasLt.h", "pip install 'cudalens[cuda-libs]'  # nvidia-cublas"),
    "cuFFT": ("cufft.h", "pip install 'cudalens[cuda-libs]'  # nvidia-cufft"),
}


def _include_dirs(tc: Toolchain) -> list[Path]:
    """The folders nvcc searches for the toolkit's headers: its root's include and include/cccl
    (as its nvcc.profile says), for the nvcc the toolchain uses."""
    nvcc = tc.tools.get("nvcc")
    if nvcc is None:
        return []
    root = Path(nvcc.path).resolve().parent.parent
    dirs = [root / "include", root / "include" / "cccl"]
    targets = root / "targets"
    if targets.is_dir():  # a system toolkit keeps them under targets/<arch>/include
        for t in sorted(targets.iterdir()):
            dirs += [t / "include", t / "include" / "cccl"]
    return [d for d in dirs if d.is_dir()]


def header_families(tc: Toolchain | None = None) -> dict[str, dict[str, Any]]:
    """Family -> {"available", "from" (the folder, with the toolchain's origin), "header", "fix"}."""
    tc = tc or discover()
    dirs = _include_dirs(tc)
    origin = tc.tools["nvcc"].origin if "nvcc" in tc.tools else None
    out: dict[str, dict[str, Any]] = {}
    for family, (header, fix) in HEADER_FAMILIES.items():
        found = next((d for d in dirs if (d / header).exists()), None)
        out[family] = {"available": found is not None, "header": header,
                       "from": f"{origin}: {found}" if found is not None else None,
                       "fix": None if found is not None else fix}
    return out


def gpu_info() -> dict[str, Any]:
    """{"available": bool, "devices": [{"name", "cc"}], "driver": str|None, "why": str|None}."""
    info: dict[str, Any] = {"available": False, "devices": [], "driver": None, "why": None}
    try:
        from cuda.bindings import runtime as cudart  # type: ignore

        err, count = cudart.cudaGetDeviceCount()
        if int(err) != 0:
            info["why"] = f"CUDA runtime: {err}"
            count = 0
        for i in range(count):
            err, prop = cudart.cudaGetDeviceProperties(i)
            if int(err) == 0:
                name = prop.name.decode(errors="replace").rstrip("\x00") if isinstance(prop.name, bytes) else str(prop.name)
                info["devices"].append({"index": i, "name": name, "cc": f"{prop.major}.{prop.minor}"})
        err, ver = cudart.cudaDriverGetVersion()
        if int(err) == 0 and ver:
            info["driver_cuda_version"] = f"{ver // 1000}.{(ver % 1000) // 10}"
    except Exception as exc:  # noqa: BLE001 - no bindings / no driver is a normal answer here
        info["why"] = f"cuda.bindings: {type(exc).__name__}: {exc}"[:200]
    try:
        import pynvml  # type: ignore

        pynvml.nvmlInit()
        try:
            drv = pynvml.nvmlSystemGetDriverVersion()
            info["driver"] = drv.decode() if isinstance(drv, bytes) else drv
        finally:
            pynvml.nvmlShutdown()
    except Exception as exc:  # noqa: BLE001
        info.setdefault("nvml_why", f"{type(exc).__name__}")
    info["available"] = bool(info["devices"])
    if not info["available"] and not info["why"]:
        info["why"] = "no NVIDIA GPU present"
    return info


def ncu_info() -> dict[str, Any]:
    path = find_ncu()
    version = None
    if path:
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
            version = out.strip().splitlines()[-1] if out.strip() else None
        except (OSError, subprocess.SubprocessError):
            pass
    return {"path": path, "version": version, "fix": None if path else FIX_COMMANDS["ncu"]}


def report(mode: str | None = None) -> dict[str, Any]:
    """Everything ``cudalens doctor`` shows, as data."""
    tc = discover(mode)
    fixes = {name: FIX_COMMANDS[name] for name in TOOLS if name not in tc.tools}
    if tc.host_compiler is None:
        fixes["host compiler"] = FIX_COMMANDS["host compiler"]
    if tc.demangler is None:
        fixes["c++filt"] = FIX_COMMANDS["c++filt"]
    return {"toolchain": tc.to_dict(), "headers": header_families(tc), "fixes": fixes, "gpu": gpu_info(),
            "ncu": ncu_info()}
