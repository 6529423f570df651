from __future__ import annotations

import json

import pytest

from cudalens.compiled.toolchain import discover, resolve_mode
from cudalens.errors import InputError, ToolchainError


def test_wheel_mode_finds_all_tools_inside_the_wheel(wheel_toolchain):
    for name in ("nvcc", "ptxas", "cuobjdump", "nvdisasm"):
        tool = wheel_toolchain.get(name)
        assert tool.origin == "wheel"
        assert "site-packages" in tool.path and "/usr/local/cuda" not in tool.path
        assert tool.version and tool.version.count(".") == 2


def test_bad_mode_is_an_input_error(monkeypatch):
    monkeypatch.setenv("CUDALENS_TOOLCHAIN", "conda")
    with pytest.raises(InputError):
        resolve_mode()


def test_system_mode_without_system_cuda_reports_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    import cudalens.compiled.toolchain as tcmod

    monkeypatch.setattr(tcmod, "_system_candidates", lambda: [tmp_path])
    tc = discover("system")
    assert tc.missing == ("nvcc", "ptxas", "cuobjdump", "nvdisasm")
    with pytest.raises(ToolchainError, match="pip install nvidia-cuda-nvcc"):
        tc.get("nvcc")


def test_doctor_json_lists_tools(wheel_toolchain):
    from click.testing import CliRunner

    from cudalens.cli import cli

    result = CliRunner().invoke(cli, ["doctor", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["toolchain"]["tools"]["nvcc"]["path"] == wheel_toolchain.get("nvcc").path
    assert data["toolchain"]["tools"]["nvdisasm"]["origin"] == "wheel"
    assert "gpu" in data and "ncu" in data


def test_doctor_text_names_the_fix_for_missing_tools(monkeypatch, tmp_path):
    from click.testing import CliRunner

    import cudalens.compiled.toolchain as tcmod
    from cudalens.cli import cli

    monkeypatch.setenv("CUDALENS_TOOLCHAIN", "system")
    monkeypatch.setattr(tcmod, "_system_candidates", lambda: [tmp_path])
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "pip install nvidia-cuda-cuobjdump" in result.output or "nvidia-cuda-cuobjdump" in result.output
