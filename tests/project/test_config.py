"""[tool.cudalens] discovery (walking up like ruff) and the build context it gives."""

from __future__ import annotations

import pytest

from cudalens.errors import InputError
from cudalens.project import build_context, find_config


def test_nearest_table_wins_and_pyproject_without_table_is_skipped(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.cudalens]\ninclude-dirs = ["inc"]\nselect = ["SH"]\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no [tool.cudalens]: skipped
    (sub / "k.cu").write_text("__global__ void k() {}\n")
    cfg = find_config(sub / "k.cu")
    assert cfg.path == str(tmp_path / "pyproject.toml")
    assert cfg.include_dirs() == (str(tmp_path / "inc"),)  # relative to the config's folder
    assert cfg.section["select"] == ["SH"] and cfg.raw["__file__"] == cfg.path  # other readers' keys kept
    (tmp_path / "a" / "cudalens.toml").write_text('nvcc_flags = ["-std=c++17"]\ndefines = {TILE = 16}\n')
    cfg = find_config(sub)
    assert cfg.path == str(tmp_path / "a" / "cudalens.toml")
    assert cfg.nvcc_flags() == ("-std=c++17",) and cfg.defines() == ("TILE=16",)


def test_no_config_is_empty(tmp_path):
    (tmp_path / "k.cu").write_text("")
    cfg = find_config(tmp_path / "k.cu")
    assert cfg.path is None or not str(cfg.path).startswith(str(tmp_path))


@pytest.mark.parametrize("text, match", [
    ("[tool.cudalens\n", "not valid TOML"),
    ('[tool.cudalens]\ninclude-dirs = 3\n', "include-dirs: expected a list of strings"),
    ('[tool.cudalens]\ncompile-commands = 1\n', "compile-commands: expected a path"),
])
def test_bad_config_is_one_line(tmp_path, text, match):
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(InputError, match=match):
        build_context([str(tmp_path / "k.cu")])


def test_context_orders_sources_and_reads_header_macros(tmp_path):
    inc = tmp_path / "include" / "lib"
    inc.mkdir(parents=True)
    (inc / "a.cuh").write_text('#pragma once\n#include "b.cuh"\n#define TILE 32 // tile side\n'
                               "constexpr int ROWS = 4;\n#define SQUARE(x) ((x) * (x))\n")
    (inc / "b.cuh").write_text("#define TILE 8\n#define PAD (TILE + 1)\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text("#include <lib/a.cuh>\n#include <cuda_runtime.h>\n__global__ void k() {}\n")
    (tmp_path / "cudalens.toml").write_text('include-dirs = ["include"]\ndefines = ["FROM_CONFIG=3"]\n')
    ctx = build_context([str(src / "k.cu")], nvcc_flags=["-std=c++17"])
    flags = ctx.nvcc_flags(src / "k.cu")
    assert flags == (f"-I{tmp_path / 'include'}", "-DFROM_CONFIG=3", "-std=c++17")
    assert ctx.project_includes(src / "k.cu") == [str(inc / "a.cuh"), str(inc / "b.cuh")]
    macros = ctx.header_macros(src / "k.cu")
    # a.cuh's TILE comes after b.cuh's in the preprocessor's order, so it wins
    assert macros["TILE"] == "32" and macros["PAD"] == "(TILE + 1)" and macros["ROWS"] == "4"
    assert "SQUARE" not in macros and macros["FROM_CONFIG"] == "3"
    with pytest.raises(InputError, match="-I nowhere: no such directory"):
        build_context([str(src / "k.cu")], include_dirs=["nowhere"])


KERNEL = "__global__ void k(float *a) { a[threadIdx.x * 2] = 1.0f; }\n"


def test_the_configuration_is_read_once_per_run(tmp_path, monkeypatch):
    """analyze reads [tool.cudalens] once and hands it to the triage options, the target and the build
    context (each read it again before: three reads per run)."""
    import cudalens.project.config as config
    from cudalens.api import analyze

    (tmp_path / "pyproject.toml").write_text('[tool.cudalens]\nignore = ["E6"]\ndefines = {TILE = 16}\n')
    (tmp_path / "k.cu").write_text(KERNEL)
    reads: list[str] = []
    real = config._read
    monkeypatch.setattr(config, "_read", lambda path: reads.append(str(path)) or real(path))
    report = analyze(tmp_path / "k.cu", compile=False, cache=None)
    assert reads == [str(tmp_path / "pyproject.toml")]
    assert report.findings and not any(f.rule == "E6" for f in report.findings)  # the one read is used


def test_no_config_leaves_out_every_key(tmp_path, monkeypatch, capsys):
    """--no-config ignores the configuration's triage keys too (an unknown rule in select was an error)."""
    from cudalens.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.cudalens]\nselect = ["Q7"]\n')
    (tmp_path / "k.cu").write_text(KERNEL)
    assert main(["check", "k.cu", "--no-compile"]) == 2
    assert "[tool.cudalens] select: unknown rule or chapter 'Q7'" in capsys.readouterr().err
    assert main(["check", "k.cu", "--no-compile", "--no-config"]) in (0, 1)
    assert "Q7" not in capsys.readouterr().err
