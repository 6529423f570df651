"""Issue #25 item 1: no program runs that the user did not name. Flags from [tool.cudalens],
compile_commands.json, options files and --nvcc-flag that name a program are refused in one line
naming their source; nothing runs (a marker file proves it); --trust-project-flags lets them through."""

from __future__ import annotations

import json
import shutil
import stat
import time

import pytest

from cudalens.cli import main
from cudalens.errors import InputError
from cudalens.project.flags import check_flags

KERNEL = "__global__ void k(float *a) { a[threadIdx.x * 2] = 1.0f; }\n"


@pytest.fixture
def evil(tmp_path):
    """A program that leaves a marker when run, a folder to hold it, and the marker's path."""
    marker = tmp_path / "MARKER"
    prog = tmp_path / "bin" / "evil"
    prog.parent.mkdir()
    prog.write_text(f"#!/bin/sh\ntouch {marker}\nexec g++ \"$@\"\n")
    prog.chmod(prog.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "k.cu").write_text(KERNEL)
    return tmp_path, prog, marker


def _run(args, capsys):
    code = main(args)
    err = capsys.readouterr().err.strip()
    return code, err


def _refused(code, err, source):
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and source in lines[0] and "refused" in lines[0], err
    assert "Traceback" not in err and "Error:" not in err


@pytest.mark.parametrize("flag", ["-ccbin={prog}", "--compiler-bindir={dir}", "-Xcompiler=-wrapper,{prog}",
                                  "-Xcompiler=-B{dir}", "-Xcompiler=-fplugin={dir}/x.so", "-Xcompiler=-specs={prog}",
                                  "-Xlinker=--plugin={prog}", "--run", "-Xcompiler=@{prog}", "-Xcompiler=-Wl,-O1"])
def test_nvcc_flag_naming_a_program_is_refused(evil, capsys, flag):
    tmp, prog, marker = evil
    f = flag.format(prog=prog, dir=prog.parent)
    _refused(*_run(["analyze", str(tmp / "k.cu"), f"--nvcc-flag={f}", "--no-config"], capsys), "--nvcc-flag")
    assert not marker.exists()


@pytest.mark.parametrize("flag", ["-ccbin={prog}", "-Xcompiler=-wrapper,{prog}"])
def test_config_flags_are_refused_naming_the_file(evil, capsys, flag):
    tmp, prog, marker = evil
    (tmp / "pyproject.toml").write_text(f'[tool.cudalens]\nnvcc-flags = ["{flag.format(prog=prog)}"]\n')
    _refused(*_run(["analyze", str(tmp / "k.cu")], capsys), "pyproject.toml")
    _refused(*_run(["check", str(tmp), "--format", "sarif"], capsys), "pyproject.toml")
    assert not marker.exists()


def test_options_file_from_compile_commands_is_checked(evil, capsys):
    tmp, prog, marker = evil
    (tmp / "opts.txt").write_text(f"-std=c++17 -ccbin {prog}\n")
    (tmp / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp), "file": "k.cu",
        "arguments": ["nvcc", "-ccbin", str(prog), "--options-file", "opts.txt", "-c", "k.cu"]}]))
    (tmp / "good.cu").write_text(KERNEL)
    t0 = time.monotonic()
    code, err = _run(["check", str(tmp), "--compile-commands", str(tmp / "compile_commands.json"),
                      "--format", "json", "-o", str(tmp / "r.json")], capsys)
    assert code == 2 and time.monotonic() - t0 < 120
    bad = [ln for ln in err.splitlines() if "k.cu" in ln and "good.cu" not in ln]
    assert len(bad) == 1 and "opts.txt" in bad[0] and "-ccbin" in bad[0], err
    assert [f["path"].rsplit("/", 1)[-1] for f in json.loads((tmp / "r.json").read_text())["files"]] == ["good.cu"]
    assert not marker.exists()


def test_optf_in_config_is_checked(evil, capsys):
    tmp, prog, marker = evil
    (tmp / "more.opts").write_text(f"-Xcompiler -B{prog.parent}\n")
    (tmp / "cudalens.toml").write_text('nvcc-flags = ["-optf", "more.opts"]\n')
    _refused(*_run(["analyze", str(tmp / "k.cu")], capsys), "more.opts")
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_trust_project_flags_lets_the_user_choose(evil, capsys):
    tmp, prog, marker = evil
    code, err = _run(["analyze", str(tmp / "k.cu"), f"--nvcc-flag=-ccbin={prog}", "--no-config",
                      "--trust-project-flags", "--format", "json", "-o", str(tmp / "r.json")], capsys)
    assert code in (0, 1), err
    assert marker.exists()  # the test can fail: with the user's consent the program does run


def test_ordinary_build_flags_pass():
    flags = ["-std=c++17", "--expt-relaxed-constexpr", "-O3", "-Xcompiler=-fPIC,-Wall", "-Xcompiler", "-fopenmp",
             "-forward-unknown-to-host-compiler", "-fPIC", "-Wno-deprecated-gpu-targets", "-lineinfo",
             "--use_fast_math", "-Xptxas=-v,-O3", "-Xcudafe", "--diag_suppress=177", "-DX=1", "-I/usr/include",
             "-maxrregcount=64", "-rdc=true", "-gencode", "arch=compute_90,code=sm_90", "--extended-lambda",
             "--std", "c++17", "-ftz", "true", "-x", "cu"]
    assert check_flags(flags, "x") == tuple(flags)
    with pytest.raises(InputError, match="x: '-ccbin /bin/true'"):
        check_flags(["-ccbin", "/bin/true"], "x")
