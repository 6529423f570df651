"""Finding the CUDA command-line tools: nvcc, ptxas, cuobjdump, nvdisasm (and a C++ demangler).

Two places can provide them:

* **wheel**: the PyPI packages cudalens depends on (``nvidia-cuda-nvcc``, ``nvidia-cuda-cuobjdump``,
  ``nvidia-cuda-nvdisasm``) install the tools under ``site-packages/nvidia/cu13/bin``. The wheel
  nvcc is self-contained: its ``nvcc.profile`` points at the wheel's own cicc, libdevice, headers
  and at ptxas/fatbinary/nvlink next to it, so it needs nothing but a host C++ compiler.
* **system**: a CUDA toolkit installed on the machine: ``$CUDA_HOME/bin``, ``$CUDA_PATH/bin``,
  the ``PATH``, then ``/usr/local/cuda/bin``.

Preference order, chosen with the environment variable ``CUDALENS_TOOLCHAIN``:

* ``auto`` (default): for each tool the wheel copy if installed, else the system one. The wheel
  versions are the ones cudalens pins and is tested with, so results are reproducible.
* ``wheel``: wheel copies only (a missing one stays missing).
* ``system``: system copies only.

Each tool is looked up independently, so a system CUDA without cuobjdump still gets the wheel's.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from cudalens.errors import InputError, ToolchainError

TOOLS = ("nvcc", "ptxas", "cuobjdump", "nvdisasm")
MODES = ("auto", "wheel", "system")

# The pip command that installs each tool (versions as pinned in pyproject.toml).
FIX_COMMANDS = {
    "nvcc": "pip install nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 "
    "nvidia-cuda-runtime==13.0.96",
    "ptxas": "pip install nvidia-cuda-nvcc==13.0.88",
    "cuobjdump": "pip install 'nvidia-cuda-cuobjdump>=13.2,<13.3'",
    "nvdisasm": "pip install 'nvidia-cuda-nvdisasm>=13.2,<13.3'",
    "c++filt": "install binutils (e.g. apt-get install binutils), or cu++filt from a CUDA toolkit",
    "host compiler": "install g++ (e.g. apt-get install g++), which nvcc needs as its host compiler",
    "ncu": "install Nsight Compute (part of a CUDA toolkit, or https://developer.nvidia.com/nsight-compute)",
}


@dataclass(frozen=True)
class Tool:
    """One tool found on disk: where, which version, from the wheels or a system CUDA."""

    name: str
    path: str
    version: str | None  # "13.0.88" (release and build as the tool prints it), None if unreadable
    origin: str  # "wheel" | "system"

    def to_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "path": self.path, "version": self.version, "origin": self.origin}


@dataclass(frozen=True)
class Toolchain:
    """The tools cudalens will call, and the environment to call them in."""

    mode: str
    tools: dict[str, Tool] = field(default_factory=dict)  # name -> Tool, only the found ones
    demangler: str | None = None  # path of cu++filt or c++filt, if any
    host_compiler: str | None = None  # path of g++/c++/clang++, if any

    def get(self, name: str) -> Tool:
        """The tool ``name``, or a ToolchainError that says how to install it."""
        tool = self.tools.get(name)
        if tool is None:
            raise ToolchainError(
                f"{name} not found (CUDALENS_TOOLCHAIN={self.mode}); fix: {FIX_COMMANDS[name]}"
            )
        return tool

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(t for t in TOOLS if t not in self.tools)

    def fingerprint(self) -> str:
        """What identifies this toolchain in a cache key: each tool's path and version."""
        return ";".join(f"{t.name}={t.path}@{t.version}" for t in sorted(self.tools.values(), key=lambda t: t.name))

    def env(self) -> dict[str, str]:
        """A process environment for running the tools: nvcc's own directory first on PATH, so that
        nvcc finds the ptxas/fatbinary/cudafe++ that came with it."""
        env = dict(os.environ)
        nvcc = self.tools.get("nvcc")
        if nvcc is not None:
            env["PATH"] = str(Path(nvcc.path).parent) + os.pathsep + env.get("PATH", "")
        return env

    def roots(self) -> tuple[str, ...]:
        """Folders whose files belong to the toolchain (each tool's CUDA root), with a trailing /."""
        out = []
        for tool in self.tools.values():
            root = str(Path(tool.path).resolve().parent.parent) + os.sep
            if root not in out:
                out.append(root)
        return tuple(out)

    def to_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "tools": {name: (self.tools[name].to_dict() if name in self.tools else None) for name in TOOLS},
            "demangler": self.demangler,
            "host_compiler": self.host_compiler,
        }


def wheel_root() -> Path | None:
    """The ``nvidia/cu13`` folder of the installed wheels, or None."""
    try:
        import nvidia  # type: ignore  # namespace package provided by the nvidia-* wheels
    except ImportError:
        return None
    for base in getattr(nvidia, "__path__", []):
        for sub in ("cu13", "cu12"):
            root = Path(base) / sub
            if (root / "bin").is_dir():
                return root
    return None


def is_toolchain_file(path: str) -> bool:
    """Whether ``path`` is a header of a CUDA toolkit, the NVIDIA wheels or the system, not the project's."""
    roots = ["/usr/include/", "/usr/lib/", "/usr/local/include/", "/usr/local/cuda", "/opt/cuda"]
    wheel = wheel_root()
    if wheel is not None:
        roots.append(str(wheel.parent) + os.sep)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            roots.append(os.path.realpath(os.environ[var]) + os.sep)
    return path.startswith(tuple(roots)) or "/site-packages/nvidia/" in path


def _wheel_candidates() -> list[Path]:
    root = wheel_root()
    return [root / "bin"] if root is not None else []


def _system_candidates() -> list[Path]:
    dirs: list[Path] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]) / "bin")
    wheel_bin = _wheel_candidates()
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and Path(entry) not in wheel_bin:
            dirs.append(Path(entry))
    dirs.append(Path("/usr/local/cuda/bin"))
    return dirs


def _find(name: str, dirs: list[Path]) -> str | None:
    for d in dirs:
        cand = d / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


_VERSION_RE = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")


@functools.lru_cache(maxsize=32)
def tool_version(path: str) -> str | None:
    """The version a CUDA tool prints with ``--version`` ("13.0.88"), None if it cannot say."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = _VERSION_RE.search(out)
    return m.group(2) if m else None


def resolve_mode(mode: str | None = None) -> str:
    """The preference mode: the argument, else $CUDALENS_TOOLCHAIN, else "auto"."""
    chosen = (mode or os.environ.get("CUDALENS_TOOLCHAIN") or "auto").strip().lower()
    if chosen not in MODES:
        raise InputError(f"CUDALENS_TOOLCHAIN={chosen!r} is not one of {', '.join(MODES)}")
    return chosen


def discover(mode: str | None = None) -> Toolchain:
    """Find every tool under the preference ``mode`` (see the module docstring). Never raises for a
    missing tool: ``Toolchain.get`` does, when the tool is actually needed."""
    chosen = resolve_mode(mode)
    searches: list[tuple[str, list[Path]]] = []
    if chosen in ("auto", "wheel"):
        searches.append(("wheel", _wheel_candidates()))
    if chosen in ("auto", "system"):
        searches.append(("system", _system_candidates()))
    tools: dict[str, Tool] = {}
    for name in TOOLS:
        for origin, dirs in searches:
            path = _find(name, dirs)
            if path is not None:
                tools[name] = Tool(name, path, tool_version(path), origin)
                break
    demangler = None
    for cand in ("cu++filt", "c++filt"):
        demangler = _find(cand, [d for _, dirs in searches for d in dirs]) or shutil.which(cand)
        if demangler:
            break
    host = next((shutil.which(c) for c in ("g++", "c++", "clang++") if shutil.which(c)), None)
    return Toolchain(chosen, tools, demangler, host)


def find_nvcc(mode: str | None = None) -> str | None:
    """The nvcc cudalens uses (the one finder: the pinned wheel first, then a system CUDA; see the
    module docstring), or None. Run it with :meth:`Toolchain.env` so it finds its own ptxas."""
    tool = discover(mode).tools.get("nvcc")
    return tool.path if tool is not None else None


def find_ncu() -> str | None:
    """Nsight Compute's command-line profiler, if installed (PATH, CUDA_HOME, /usr/local/cuda)."""
    return shutil.which("ncu") or _find("ncu", _system_candidates())
