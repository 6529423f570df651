"""compile_commands.json: each file's own flags, translated for our nvcc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudalens.errors import InputError
from cudalens.project import build_context, load_compile_commands

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cmake_project"


def test_committed_example_with_relative_paths():
    entries = load_compile_commands(EXAMPLE / "compile_commands.json")
    unit = str((EXAMPLE / "src" / "scale.cu").resolve())
    assert set(entries) == {unit, str((EXAMPLE / "src" / "transpose.cu").resolve())}
    flags = entries[unit].flags
    assert "-DSCALE_BLOCK=256" in flags and "-std=c++17" in flags and "--expt-relaxed-constexpr" in flags
    assert f"-I{EXAMPLE.resolve() / 'include'}" in flags
    # the build's outputs, input and targets are ours to choose
    assert not any(f.startswith(("--generate-code", "-o", "-c")) or f.endswith(".cu") for f in flags)


def test_options_file_arguments_form_and_clang(tmp_path):
    build = tmp_path / "build"
    (build / "rsp").mkdir(parents=True)
    (build / "rsp" / "inc.rsp").write_text(f'-I"{tmp_path}/with space/include"\n')
    src = tmp_path / "k.cu"
    src.write_text("")
    data = [
        {"directory": str(build), "file": str(src),
         "command": f"/opt/cuda/bin/nvcc -DA=1 --options-file rsp/inc.rsp -gencode arch=compute_80,code=sm_80 "
                    f"-I ../inc -x cu -c {src} -o k.o"},
        {"directory": str(build), "file": "../other.cu",
         "arguments": ["clang++", "-x", "cuda", "--cuda-gpu-arch=sm_90", "-Iinc", "-DB", "-O2", "-c", "../other.cu"]},
    ]
    (build / "compile_commands.json").write_text(json.dumps(data))
    entries = load_compile_commands(build / "compile_commands.json")
    nv = entries[str(src)].flags
    assert nv == ("-DA=1", "--options-file", str(build / "rsp" / "inc.rsp"), "-I", str(tmp_path / "inc"))
    assert entries[str(tmp_path / "other.cu")].flags == (f"-I{build / 'inc'}", "-DB")  # clang: shared flags only
    ctx = build_context([str(src)], compile_commands=str(build / "compile_commands.json"), use_config=False)
    # the options file is read once, when its flags are checked (project/flags.py), and its flags take its place
    assert ctx.nvcc_flags(src) == ("-DA=1", f"-I{tmp_path}/with space/include", "-I", str(tmp_path / "inc"))


@pytest.mark.parametrize("text, match", [
    ("{", "not valid JSON"),
    ("{}", "expected a JSON list"),
    ('[{"file": "a.cu"}]', 'needs "directory" and "file"'),
    ('[{"file": "a.cu", "directory": "."}]', 'neither "arguments" nor "command"'),
])
def test_bad_files_are_one_line(tmp_path, text, match):
    (tmp_path / "cc.json").write_text(text)
    with pytest.raises(InputError, match=match):
        load_compile_commands(tmp_path / "cc.json")
