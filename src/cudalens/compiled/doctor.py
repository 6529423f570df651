"""What cudalens can use on this machine: CUDA tools, GPU and driver, Nsight Compute.

Library side of ``cudalens doctor``: returns plain data, never prints. Every probe is guarded, so
a machine without a GPU, driver or bindings reports that instead of failing.
"""

from __future__ import annotations

import subprocess
from typing import Any

from cudalens.compiled.toolchain import FIX_COMMANDS, TOOLS, discover, find_ncu


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
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
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
    return {"toolchain": tc.to_dict(), "fixes": fixes, "gpu": gpu_info(), "ncu": ncu_info()}
