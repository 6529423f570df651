"""`analyze --run` names the kernel as `bench --kernel` does: plain or any C++ name."""

from __future__ import annotations

import pytest

from cudalens.cli import main
from cudalens.hardware.target import device_cc

SOURCE = """namespace vk {
template <int S>
__global__ void strided_copy(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i * S] = in[i * S];
}
template __global__ void strided_copy<8>(float*, const float*);
}
"""
ARGS = "--grid 4 --block 32 --arg float32[1024]:zeros@out --arg float32[1024]"


def test_run_spec_base_name():
    from cudalens.pipeline import RunSpec

    for name, base in (("vk::strided_copy<8>", "strided_copy"), ("saxpy", "saxpy"),
                       ("ns::k<float, pair<int,int>>", "k")):
        assert RunSpec(name, (1, 1, 1), (32, 1, 1)).base_name == base


@pytest.mark.skipif(device_cc() is not None, reason="checks the no-GPU path; the GPU run is benchmarks' work")
def test_cpp_name_is_found_and_the_measurement_skipped_without_a_gpu(tmp_path, capsys):
    src = tmp_path / "vk.cu"
    src.write_text(SOURCE)
    assert main(["analyze", str(src), "--no-compile", "--run", f"vk::strided_copy<8> {ARGS}"]) == 0
    err = capsys.readouterr().err
    assert "no kernel" not in err and "skipped" in err


def test_an_unknown_name_is_one_line_naming_the_kernels(tmp_path, capsys):
    src = tmp_path / "vk.cu"
    src.write_text(SOURCE)
    assert main(["analyze", str(src), "--no-compile", "--run", f"vk::nope<8> {ARGS}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no kernel 'vk::nope<8>'" in err and "strided_copy" in err


def test_run_help_no_longer_asks_for_extern_c(capsys):
    assert main(["analyze", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert 'extern "C"' not in out and "vk::strided_copy<8>" in out
