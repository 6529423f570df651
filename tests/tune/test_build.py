"""Per-configuration compilation: the template is instantiated by name, ptxas's report read back,
a configuration the compiler rejects becomes a reason, and the cache answers a second time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cudalens.errors import InputError
from cudalens.tune.build import BuildJob, KernelSpec, build_all, build_one, check_flags, instantiations

GEMM = str(Path(__file__).resolve().parents[2] / "examples" / "tune" / "gemm.cu")


def test_kernel_spec_and_wrapper():
    k = KernelSpec.parse("gemm<BM, BN*2, float>")
    assert k.name == "gemm" and k.template_args == ("BM", "BN*2", "float")
    assert k.instance({"BM": 64, "BN": 32}) == "gemm<64, 64, float>"
    job = BuildJob("/x/k.cu", k, "BM=64,BN=32", (("BM", 64), ("BN", 32)), "9.0")
    assert instantiations(job) == ("gemm<64, 64, float>",)
    macros = BuildJob("/x/k.cu", KernelSpec.parse("saxpy"), "B=1", (("B", 1),), "9.0")
    assert instantiations(macros) == ()
    assert KernelSpec.parse("saxpy").instance({}) == "saxpy"
    for bad in ("gemm<BM", "gemm<>", "a b"):
        with pytest.raises(InputError):
            KernelSpec.parse(bad)


@pytest.fixture()
def with_nvdisasm(nvcc_toolchain):
    """The toolchain of ``nvcc_toolchain`` when it has nvdisasm too (the SASS counts need it)."""
    if "nvdisasm" not in nvcc_toolchain.tools:
        pytest.skip("no nvdisasm (wheel)")
    return nvcc_toolchain


@pytest.mark.slow
def test_real_compile_of_two_configurations(tmp_path, with_nvdisasm):
    k = KernelSpec.parse("gemm<BM,BN,BK,TM,TN>")
    good = BuildJob(GEMM, k, "good", (("BM", 64), ("BN", 64), ("BK", 8), ("TM", 4), ("TN", 4)), "9.0",
                    cache_dir=str(tmp_path), define_params=False)
    big = BuildJob(GEMM, k, "big", (("BM", 256), ("BN", 256), ("BK", 32), ("TM", 8), ("TN", 8)), "9.0",
                   cache_dir=str(tmp_path), define_params=False)
    facts = build_all([good, big], workers=2)
    f = facts["good"]
    assert f.ok and f.mangled.startswith("_Z4gemmILi64ELi64ELi8ELi4ELi4E")
    assert 0 < f.resources["registers"] <= 255 and f.resources["static_shared_bytes"] == (64 + 64) * 8 * 4
    assert f.sass_counts.get("fp32", 0) >= 8 * 4 * 4  # the unrolled BK x TM x TN FMAs at least
    assert os.path.getsize(f.cubin_path) > 0
    b = facts["big"]
    assert not b.ok and b.error.startswith("does not compile") and "shared" in b.error
    again = build_one(good)
    assert again.cache_hit and again.mangled == f.mangled


def test_missing_toolchain_is_a_reason_not_a_crash(tmp_path, monkeypatch):
    from cudalens.compiled.toolchain import Toolchain

    job = BuildJob(GEMM, KernelSpec.parse("gemm<BM,BN,BK,TM,TN>"), "k", (("BM", 64),), "9.0", cache_dir=str(tmp_path))
    f = build_one(job, toolchain=Toolchain("wheel", {}))
    assert not f.ok and "nvcc not found" in f.error


def test_hostile_flag_is_refused_before_nvcc_runs(tmp_path):
    """--nvcc-flag goes through the project's safe nvcc invocation: shell characters are refused in one
    line before any compile, and a configuration built with one is a reason, not a command run."""
    victim = tmp_path / "pwned"
    bad = f"-Xcompiler=$(touch {victim})"
    with pytest.raises(InputError, match="--nvcc-flag .*shell"):
        check_flags(GEMM, [bad])
    check_flags(GEMM, ["-O3", "-DX=1", "-I/usr/include"])  # ordinary flags pass
    job = BuildJob(GEMM, KernelSpec.parse("gemm<BM,BN,BK,TM,TN>"), "k", (("BM", 64),), "9.0", flags=(bad,),
                   cache_dir=str(tmp_path / "cache"), define_params=False)
    f = build_one(job)
    assert not f.ok and not victim.exists()
    from cudalens.compiled.toolchain import discover

    if "nvcc" in discover().tools:  # without nvcc the reason is that it is missing
        assert "shell" in (f.error or "")


@pytest.mark.slow
def test_source_path_with_quote_and_space_compiles(tmp_path, with_nvdisasm):
    odd = tmp_path / 'my "gemm" dir'
    odd.mkdir()
    src = odd / "gemm's.cu"
    src.write_text(Path(GEMM).read_text())
    job = BuildJob(str(src), KernelSpec.parse("gemm<BM,BN,BK,TM,TN>"), "k",
                   (("BM", 64), ("BN", 64), ("BK", 8), ("TM", 4), ("TN", 4)), "9.0", cache_dir=str(tmp_path / "c"),
                   define_params=False)
    f = build_one(job)
    assert f.ok and f.mangled.startswith("_Z4gemmILi64ELi64ELi8ELi4ELi4E") and f.resources["registers"] > 0
