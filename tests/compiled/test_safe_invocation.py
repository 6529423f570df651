"""No shell sees user text when compiling (issue #12 item 1): file names, folder names, macros and
flags with shell syntax reach nvcc only inside files, never on its command line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cudalens.compiled import compile_file
from cudalens.compiled.invocation import prepare
from cudalens.errors import InputError

KERNEL = '#include "{inc}"\n__global__ void k(float *a) {{ a[threadIdx.x] = TILE + EXTRA; }}\n'
# A shell that ran any of these would create ran* files in $HOME (``cd`` alone goes there); file
# names cannot hold "/", so the commands reach the test's folder through $HOME.
HOSTILE = ["k;cd;touch ran1;$(cd;touch ran2)`cd;touch ran3`.cu", "q'uote\"d name $(cd;touch ran4).cu",
           "new\nline;cd;touch ran5.cu"]


def _tree(tmp_path: Path, file_name: str) -> Path:
    folder = tmp_path / "dir $(cd;touch ran6) `cd;touch ran7`"
    (folder / "sub").mkdir(parents=True)
    (folder / "common.h").write_text("#define TILE 32\n")
    src = folder / "sub" / file_name
    src.write_text(KERNEL.format(inc="../common.h"))
    return src


@pytest.mark.parametrize("name", HOSTILE, ids=["subst-backtick", "quotes", "newline"])
def test_hostile_names_compile_and_run_nothing(wheel_toolchain, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    src = _tree(tmp_path, name)
    inc = tmp_path / "inc $(cd;touch ran8)"
    inc.mkdir()
    (inc / "extra.h").write_text("#define EXTRA_FROM_DIR 1\n")
    result = compile_file(src, "9.0", {"EXTRA": "1", "UNUSED": "$(cd;touch ran9)", "UNUSED2": "`cd;touch ran10`"},
                          [f"-I{inc}", "-std=c++17"], False, wheel_toolchain)
    assert "k" in result.kernels
    # the kernel's line is attributed to the user's file, whatever its name
    assert 2 in result.kernels["k"].sass_by_line
    # the dependency list names the real files (the cache key)
    assert str(src.resolve()) in result.deps and str((src.parent.parent / "common.h").resolve()) in result.deps
    assert not [p for p in os.listdir(tmp_path) if p.startswith("ran")]


def test_errors_name_the_users_file(wheel_toolchain, tmp_path):
    from cudalens.compiled.model import CompileError

    src = tmp_path / "bad;$(id).cu"
    src.write_text("__global__ void k(float *a) { a[0] = undefined_name; }\n")
    with pytest.raises(CompileError) as info:
        compile_file(src, "9.0", None, (), False, wheel_toolchain)
    first = info.value.messages[0]
    assert first.file == str(src) and first.line == 1 and "undefined_name" in first.message


@pytest.mark.parametrize("flag", ["-Xcompiler=$(touch x)", "--foo;id", "-arch=`id`", "-O3 -g", "~/x"])
def test_flags_with_shell_syntax_are_refused(tmp_path, flag):
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    with pytest.raises(InputError, match="--nvcc-flag"):
        prepare(src, tmp_path, [flag], where="--nvcc-flag")


def test_macros_go_into_the_wrapper_not_the_command_line(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    work = tmp_path / "w"
    work.mkdir()
    inv = prepare(src, work, ["-DA=$(id)", "-D", "B", "-UC", "-O3", "-I", str(tmp_path / "a b")])
    assert not any("$" in f or " " in f for f in inv.flags)
    text = inv.wrapper.read_text()
    assert "#define A $(id)" in text and "#define B 1" in text and "#undef C" in text
    (tmp_path / "w2").mkdir()
    with pytest.raises(InputError, match="line break"):
        prepare(src, tmp_path / "w2", ["-DA=1\nB"])


def test_keep_flags_are_ours_to_choose(tmp_path):
    """The compile keeps its PTX in a folder of ours: a user's --keep/--keep-dir/-save-temps is dropped."""
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    inv = prepare(src, tmp_path, ["--keep", "--keep-dir", "/elsewhere", "-keep-dir=/y", "-save-temps", "-O3"])
    assert inv.flags == ("-O3",)


def test_instantiations_are_lines_of_the_wrapper(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("template <int N> __global__ void k() {}\n")
    inv = prepare(src, tmp_path, [], instantiate=["k<4>", "ns::k< 2 * 8 >"])
    lines = inv.wrapper.read_text().splitlines()
    assert lines[-2:] == ["static auto* __cudalens_inst_0 = &k<4>;", "static auto* __cudalens_inst_1 = &ns::k< 2 * 8 >;"]
    assert inv.instantiation_at(len(lines)) == "ns::k< 2 * 8 >" and inv.instantiation_at(1) is None
    for bad in ("k<1>;x", "k<1>//", "k", "k<1>\n", "k<\"a\">", "k<1>{}"):
        with pytest.raises(InputError, match="--instantiate"):
            prepare(src, tmp_path / "x", [], instantiate=[bad])
