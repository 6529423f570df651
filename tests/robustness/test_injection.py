"""File names are data, never shell: names with ``$(...)``, backticks, ``;``, quotes, ``|``, ``&``,
spaces and a newline are analyzed, checked and benchmarked, and none of their payloads runs.

Every payload would create a file named ``pwned_*`` (in the working directory of whatever shell
ran it). The commands run in ``tmp_path`` with the compiler enabled (nvcc passes its input's name
through a shell, so this is where an unsafe name would execute); afterwards no ``pwned_*`` file
may exist anywhere under ``tmp_path``, in the repository or in the temporary directory.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

KERNEL = 'extern "C" __global__ void k(float *a) { a[threadIdx.x * 2] = 1.0f; }\n'

NAMES = [
    "k$(touch pwned_dollar).cu",
    "k`touch pwned_tick`.cu",
    "k;touch pwned_semi;.cu",
    "k';touch pwned_squote;'.cu",
    'k";touch pwned_dquote;".cu',
    "k|touch pwned_pipe.cu",
    "k&touch pwned_amp&.cu",
    "k with spaces $(touch pwned_space).cu",
    "k\ntouch pwned_newline\n.cu",
    "-k $(touch pwned_dash).cu",
]

REPO = Path(__file__).resolve().parents[2]


def _pwned(tmp: Path) -> list[str]:
    found = []
    for where in (tmp, REPO, Path(tempfile.gettempdir()), Path.home()):
        found += glob.glob(str(where / "**" / "pwned_*"), recursive=True) if where == tmp else \
            glob.glob(str(where / "pwned_*"))
    return found


def _cli(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cudalens", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"}, check=False)


@pytest.fixture
def hostile(tmp_path) -> tuple[Path, list[Path]]:
    src = tmp_path / "src"
    src.mkdir()
    files = []
    for name in NAMES:
        p = src / name
        p.write_text(KERNEL)
        files.append(p)
    assert not _pwned(tmp_path)
    return src, files


def test_analyze_runs_no_file_name(hostile, tmp_path):
    _src, files = hostile
    p = _cli(["analyze", "--format", "json", *map(str, files)], cwd=tmp_path)
    assert not _pwned(tmp_path), "a file name was executed by a shell"
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Traceback" not in p.stderr

    report = json.loads(p.stdout)
    assert len(report["files"]) == len(NAMES)
    assert sorted(f["path"] for f in report["files"]) == sorted(map(str, files))
    if _has_nvcc():  # the names really went through the compiler
        assert all(f["compiled"] for f in report["files"]), report["files"]


def _has_nvcc() -> bool:
    try:
        from cudalens.compiled.toolchain import discover

        return discover().tools.get("nvcc") is not None
    except Exception:  # noqa: BLE001 - no toolchain: the test still checks that nothing ran
        return False


def test_check_runs_no_file_name(hostile, tmp_path):
    src, _files = hostile
    p = _cli(["check", str(src), "--format", "sarif"], cwd=tmp_path)
    assert not _pwned(tmp_path), "a file name was executed by a shell"
    assert p.returncode in (0, 1), p.stderr[-2000:]
    assert "Traceback" not in p.stderr


def test_bench_runs_no_file_name(hostile, tmp_path):
    _src, files = hostile
    for f in files:
        p = _cli(["bench", str(f), "--kernel", "k", "--grid", "1", "--block", "32", "--no-save"], cwd=tmp_path,
                 timeout=300)
        assert not _pwned(tmp_path), f"{f.name!r} was executed by a shell"
        assert "Traceback" not in p.stderr
        if p.returncode != 0:  # no GPU here: one clean line, exit 2
            assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr[-2000:]


def test_compile_ptx_runs_no_file_name(hostile, tmp_path, monkeypatch):
    """The PTX the access model reads is compiled the same safe way (a wrapper, never the name)."""
    if not _has_nvcc():
        pytest.skip("no nvcc (pip install nvidia-cuda-nvcc)")
    from cudalens.compiled.ptx import compile_ptx

    _src, files = hostile
    monkeypatch.chdir(tmp_path)
    for f in files[:4]:
        build = compile_ptx(f)
        assert not _pwned(tmp_path), f"{f.name!r} was executed by a shell"
        assert str(f) in build.ptx  # line info still names the user's file


TEMPLATE = "template <int N> __global__ void tk(float *a) { a[threadIdx.x * N] = 1.0f; }\n"

#: --instantiate texts that try to leave the declaration they are written into (a second
#: declaration, a comment, a directive, a string, a line break) or to reach a shell.
HOSTILE_INSTANTIATIONS = [
    "tk<1>; int pwned_semi = system(\"touch pwned_inst_semi\")",
    "tk<1> /* $(touch pwned_inst_comment) */",
    "tk<1>\n#include \"/etc/passwd\"",
    "tk<1>\"$(touch pwned_inst_quote)\"",
    "tk<`touch pwned_inst_tick`>",
    "tk<{1}>",
    "$(touch pwned_inst_dollar)",
]


@pytest.mark.parametrize("spec", HOSTILE_INSTANTIATIONS)
def test_instantiate_text_is_refused_in_one_line(spec, tmp_path):
    f = tmp_path / "tk.cu"
    f.write_text(TEMPLATE)
    for cmd in (["analyze", str(f)], ["check", str(f)]):
        p = _cli([*cmd, "--instantiate", spec], cwd=tmp_path, timeout=300)
        assert not _pwned(tmp_path), "an --instantiate text was executed"
        assert p.returncode == 2, p.stderr[-2000:]
        assert "Traceback" not in p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and "--instantiate" in lines[0], p.stderr


def test_instantiate_beside_hostile_file_names(hostile, tmp_path):
    """A good --instantiate on files with hostile names: compiled, instantiated, nothing ran."""
    _src, files = hostile
    for f in files:
        f.write_text(TEMPLATE)
    p = _cli(["analyze", "--format", "json", "--instantiate", "tk<2>", *map(str, files)], cwd=tmp_path)
    assert not _pwned(tmp_path), "a file name was executed by a shell"
    assert p.returncode == 0, p.stderr[-2000:]
    report = json.loads(p.stdout)
    if _has_nvcc():
        assert all(k["access_layer"] == "compiled-ptx" for k in report["kernels"]), report["kernels"]
        assert len(report["kernels"]) == len(NAMES)
