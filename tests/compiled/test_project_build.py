"""Real projects compile: the CMake example with its compile_commands.json, headers in context,
check on a tree with one bad file, and the cache keyed by the compiler's dependency list."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cudalens.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cmake_project"
CC_JSON = EXAMPLE / "compile_commands.json"


def _check(capsys, *args: str) -> tuple[int, dict | str, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out), err
    except ValueError:
        return code, out, err


def test_cmake_project_compiles_with_its_flags_and_header_macro_reaches_the_model(wheel_toolchain, capsys):
    code, data, _ = _check(capsys, str(EXAMPLE), "--compile-commands", str(CC_JSON), "--format", "json",
                           "--no-config", "-j", "2")
    assert code == 0
    files = {Path(f["path"]).name: f for f in data["files"]}
    assert all(f["compiled"] and f["compile_error"] is None for f in files.values()), files
    # the header is compiled through a unit that includes it, and its kernel points into it
    assert "compiled through" in files["common.cuh"]["notes"][0]
    kernels = {k["name"]: k for k in data["kernels"]}
    assert kernels["scale_rows"]["file"].endswith("common.cuh") and kernels["scale_rows"]["resources"]
    assert kernels["transpose"]["resources"]["static_shared_bytes"] == 32 * 32 * 4  # TILE from the header
    sh1 = [f for f in data["findings"] if f["rule"] == "SH1" and f["kernel"] == "transpose"]
    assert sh1 and "32-way" in sh1[0]["message"] and sh1[0]["line"] == 13


def test_without_the_projects_flags_the_example_does_not_build(wheel_toolchain, capsys):
    code, data, err = _check(capsys, str(EXAMPLE / "src"), "--format", "json", "--no-config", "--strict")
    files = {Path(f["path"]).name: f for f in data["files"]}
    # the include no -I names is found in the repository, named in a note and the compile retried
    # with it (both files), so the compiled layer knows TILE and transpose's bank conflict is found
    for name in ("scale.cu", "transpose.cu"):
        assert any(f"tiles/common.cuh found in {EXAMPLE / 'include'}" in n for n in files[name]["notes"]), name
    assert files["transpose.cu"]["compiled"]
    assert [f for f in data["findings"] if f["rule"] == "SH1"]
    # scale.cu still needs SCALE_BLOCK from the build: analysed source-only, and said so
    assert "SCALE_BLOCK is defined by the build" in files["scale.cu"]["compile_error"]
    assert "scale.cu: compile-error: " in err and code == 1  # --strict: a compile error fails the run
    assert data["source_only"] == 1
    # -I alone reaches the header's macro (the model) but scale.cu still needs SCALE_BLOCK
    code, data, _ = _check(capsys, str(EXAMPLE / "src"), "--format", "json", "--no-config",
                           "-I", str(EXAMPLE / "include"), "--nvcc-flag=-std=c++17")
    files = {Path(f["path"]).name: f for f in data["files"]}
    assert "SCALE_BLOCK is defined by the build" in files["scale.cu"]["compile_error"]
    assert files["transpose.cu"]["compiled"]
    assert [f for f in data["findings"] if f["rule"] == "SH1"]


def test_one_unreadable_file_among_good_ones(wheel_toolchain, capsys, tmp_path):
    for name in ("a.cu", "b.cu"):
        shutil.copy(EXAMPLE.parent / "access" / "transpose.cu", tmp_path / name)
    (tmp_path / "gone.cu").symlink_to(tmp_path / "missing.cu")  # unreadable, even for root
    (tmp_path / "text.cu").write_text("just some words\n")
    code, out, err = _check(capsys, str(tmp_path), "--no-config")
    assert code == 2
    assert "a.cu: " in out and "b.cu: " in out and out.count("SH1") == 2  # the good files' findings
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 2 and "gone.cu: cannot read" in lines[0] and "text.cu" in lines[1]
    assert "Traceback" not in err


def test_editing_a_header_invalidates_the_units_that_include_it(wheel_toolchain, tmp_path):
    from cudalens.compiled import compile_file

    (tmp_path / "inc").mkdir()
    header = tmp_path / "inc" / "w.cuh"
    header.write_text("#define N 4\n")
    unit = tmp_path / "k.cu"
    unit.write_text('#include "w.cuh"\n__global__ void k(float *a) { float t[N];\n'
                    "  for (int i = 0; i < N; i++) t[i] = a[i * threadIdx.x];\n  a[threadIdx.x] = t[N - 1]; }\n")
    flags = [f"-I{tmp_path / 'inc'}"]
    first = compile_file(unit, "9.0", None, flags, True, wheel_toolchain)
    assert not first.cache_hit and str(header) in first.deps
    assert compile_file(unit, "9.0", None, flags, True, wheel_toolchain).cache_hit
    header.write_text("#define N 64\n")
    third = compile_file(unit, "9.0", None, flags, True, wheel_toolchain)
    assert not third.cache_hit
    assert compile_file(unit, "9.0", None, flags, True, wheel_toolchain).cache_hit


def test_a_header_nothing_includes_compiles_through_the_wrapper(wheel_toolchain, tmp_path):
    from cudalens.compiled import compile_file

    header = tmp_path / "lonely.cuh"
    header.write_text("#pragma once\n__global__ void lonely(float *a) { a[threadIdx.x] *= 2.0f; }\n")
    result = compile_file(header, "9.0", None, (), False, wheel_toolchain)
    assert "lonely" in result.kernels and 2 in result.kernels["lonely"].sass_by_line


def test_analyze_a_header_alone_goes_through_the_unit_that_instantiates_it(wheel_toolchain, capsys):
    code = main(["analyze", str(EXAMPLE / "include" / "tiles" / "common.cuh"), "--compile-commands", str(CC_JSON),
                 "--format", "json", "--no-config"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert "scale.cu (compile_commands.json)" in data["files"][0]["notes"][0]
    (kernel,) = data["kernels"]
    assert kernel["name"] == "scale_rows" and kernel["resources"]["registers"] > 0
