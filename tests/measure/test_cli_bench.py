import pytest

from cudalens.cli import main

KERNEL = 'extern "C" __global__ void scale(float* x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n'


def _one_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cudalens: error")
    return err[0]


def test_bad_arg_spec_is_named(tmp_path, capsys):
    cu = tmp_path / "k.cu"
    cu.write_text(KERNEL)
    rc = main(["bench", str(cu), "--kernel", "scale", "--grid", "4", "--block", "256",
               "--arg", "float32[1024]", "--arg", "float32=abc", "--arg", "int32=1024", "--db", str(tmp_path / "h.db")])
    assert rc == 2
    assert "float32=abc" in _one_line(capsys)


def test_bad_grid_and_missing_file(tmp_path, capsys):
    cu = tmp_path / "k.cu"
    cu.write_text(KERNEL)
    assert main(["bench", str(cu), "--kernel", "scale", "--grid", "x", "--block", "256"]) == 2
    assert "--grid" in _one_line(capsys)
    assert main(["bench", str(tmp_path / "nope.cu"), "--kernel", "scale", "--grid", "1", "--block", "1"]) == 2
    assert "no such" in _one_line(capsys)


def test_no_gpu_is_one_line_exit_2(tmp_path, capsys):
    from ._factory import has_gpu

    if has_gpu():
        pytest.skip("a GPU is present")
    cu = tmp_path / "k.cu"
    cu.write_text(KERNEL)
    rc = main(["bench", str(cu), "--kernel", "scale", "--grid", "4", "--block", "256", "--arg", "float32[1024]",
               "--arg", "float32=2", "--arg", "int32=1024", "--db", str(tmp_path / "h.db")])
    assert rc == 2
    assert "GPU" in _one_line(capsys)
    assert not (tmp_path / "h.db").exists()
