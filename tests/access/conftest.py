"""Shared fixture of the access-model tests: our own kernels compiled to PTX with the wheel toolchain."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cudalens.compiled.ptx import PtxBuild, PtxModule, compile_ptx


@pytest.fixture(scope="session")
def ptx_build(nvcc_toolchain) -> Callable[[Path], PtxBuild]:
    """A function giving the sm_90 PTX build of a source file, or a skip naming what is missing."""
    return lambda source: compile_ptx(source, "9.0", toolchain=nvcc_toolchain)


@pytest.fixture(scope="session")
def ptx_of(ptx_build) -> Callable[[Path], PtxModule]:
    """The sm_90 PTX module of a source file."""
    return lambda source: ptx_build(source).module


@pytest.fixture(scope="session")
def ptx_text_of(ptx_build) -> Callable[[Path], str]:
    """The sm_90 PTX text of a source file."""
    return lambda source: ptx_build(source).ptx
