"""Compiled-layer fixtures: the wheel toolchain only (no system CUDA on PATH), a temporary cache,
and every example compiled once per session, in parallel."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "compiled"


def _wheel_env(mp: pytest.MonkeyPatch, cache: Path) -> None:
    mp.setenv("CUDALENS_TOOLCHAIN", "wheel")
    mp.setenv("CUDALENS_CACHE_DIR", str(cache))
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if "cuda" not in p.lower() and p != "/usr/local/bin"]
    mp.setenv("PATH", os.pathsep.join(path))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        mp.delenv(var, raising=False)


@pytest.fixture(scope="session")
def wheel_toolchain(tmp_path_factory):
    """The toolchain discovered with CUDALENS_TOOLCHAIN=wheel and PATH stripped of system CUDA."""
    mp = pytest.MonkeyPatch()
    _wheel_env(mp, tmp_path_factory.mktemp("cache"))
    from cudalens.compiled.toolchain import discover

    tc = discover()
    if tc.missing:
        mp.undo()
        pytest.skip(f"wheel toolchain incomplete: {tc.missing}")
    yield tc
    mp.undo()


@pytest.fixture(scope="session")
def compiled(wheel_toolchain):
    """name -> CompileResult for the examples (compiled without cache, all at once)."""
    from cudalens.compiled import compile_file

    jobs = {
        "local_array": (EXAMPLES / "local_array.cu", ()),
        "double_literal": (EXAMPLES / "double_literal.cu", ()),
        "mixed": (EXAMPLES / "mixed.cu", ()),
        "smem48k": (EXAMPLES / "smem48k.cu", ()),
        "regs64": (EXAMPLES / "regs.cu", ("-DACC=64",)),
        "regs64_capped": (EXAMPLES / "regs.cu", ("-DACC=64", "-maxrregcount=64")),
        "regs24": (EXAMPLES / "regs.cu", ("-DACC=24",)),
        "mixed_fast": (EXAMPLES / "mixed.cu", ("-use_fast_math",)),
    }
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            name: pool.submit(compile_file, path, "9.0", None, flags, False, wheel_toolchain)
            for name, (path, flags) in jobs.items()
        }
        return {name: f.result() for name, f in futures.items()}
