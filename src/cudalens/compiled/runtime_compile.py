"""Compile CUDA C++ for a run on this machine's GPU, and load it: NVRTC if its library loads, else
``nvcc -cubin`` (the one nvcc finder, :func:`cudalens.compiled.toolchain.find_nvcc`). The driver
calls that load the cubin are :mod:`cudalens.hardware.cuda_driver`'s."""

from __future__ import annotations

import os
import subprocess
import tempfile
from typing import Sequence

from cudalens.errors import ToolchainError
from cudalens.hardware.cuda_driver import Kernel, _driver, check


def _nvrtc_cubin(source: str, name: str, arch: str, options: Sequence[str]) -> bytes:
    from cuda.bindings import nvrtc  # noqa: PLC0415

    prog = check(nvrtc.nvrtcCreateProgram(source.encode("utf-8", "surrogateescape"), f"{name}.cu".encode(), 0, [], []),
                 "nvrtcCreateProgram")
    try:
        opts = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in options)]
        status = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if int(status[0]) != 0:
            size = check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
            log = b" " * size
            check(nvrtc.nvrtcGetProgramLog(prog, log), "nvrtcGetProgramLog")
            raise ToolchainError(f"NVRTC could not compile {name}: {log.decode(errors='replace').strip()}")
        size = check(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        cubin = b" " * size
        check(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        return cubin
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def find_nvcc() -> str | None:
    """nvcc as cudalens.compiled.toolchain finds it (the one finder: wheels first)."""
    from cudalens.compiled.toolchain import find_nvcc as _find

    return _find()


def _nvcc_cubin(source: str, name: str, arch: str, options: Sequence[str]) -> tuple[bytes, str]:
    nvcc = find_nvcc()
    if nvcc is None:
        raise ToolchainError("neither NVRTC (libnvrtc) nor nvcc was found to compile a kernel")
    with tempfile.TemporaryDirectory(prefix="cudalens_") as tmp:
        from cudalens.compiled.invocation import nvcc_command

        src, out = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as fh:
            fh.write(source)
        work = os.path.join(tmp, "w")
        os.mkdir(work)
        # -D/-I values go into a wrapper file, never onto nvcc's command line (nvcc uses a shell)
        cmd, _ = nvcc_command(nvcc, src, work, ["-cubin", f"-arch={arch}", *options], out, where="-D")
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise ToolchainError(f"nvcc could not compile {name}: {proc.stderr.strip()[-2000:]}")
        with open(out, "rb") as fh:
            return fh.read(), nvcc


def compile_cubin(source: str, name: str, cc: tuple[int, int],
                  options: Sequence[str] = ("-O3",)) -> tuple[bytes, str]:
    """``source`` compiled for ``sm_<cc>``: (cubin bytes, "nvrtc" or "nvcc").

    NVRTC is tried first (``-O3`` is not an NVRTC option, so only options NVRTC knows are passed
    to it). If libnvrtc cannot be loaded, or it cannot compile the file (a whole program that
    includes host headers such as ``<cstdio>``, which NVRTC does not ship), ``nvcc -cubin`` is
    used. When both fail, the error carries both compilers' messages.
    """
    arch = f"sm_{cc[0]}{cc[1]}"
    try:
        nvrtc_opts = [o for o in options if o != "-O3"]
        return _nvrtc_cubin(source, name, arch, nvrtc_opts), "nvrtc"
    except ToolchainError as nvrtc_error:
        try:
            return _nvcc_cubin(source, name, arch, options)
        except ToolchainError as nvcc_error:
            raise ToolchainError(f"{nvrtc_error}; nvcc: {nvcc_error}") from None
    except Exception:  # noqa: BLE001 - libnvrtc missing: fall back to nvcc
        return _nvcc_cubin(source, name, arch, options)


def compile_kernel(source: str, name: str, cc: tuple[int, int],
                   options: Sequence[str] = ("-O3",)) -> Kernel:
    """Compile ``source`` (see :func:`compile_cubin`), load it into the current context, return
    the kernel ``name``, which must be declared ``extern "C"`` so its name is not mangled."""
    cubin, compiler = compile_cubin(source, name, cc, options)
    import numpy as np  # noqa: PLC0415

    drv = _driver()
    image = np.frombuffer(cubin, dtype=np.uint8)  # kept alive for the call; the driver copies it
    module = check(drv.cuModuleLoadData(image.ctypes.data), f"cuModuleLoadData({name})")
    function = check(drv.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction({name})")
    return Kernel(name, module, function, compiler)
