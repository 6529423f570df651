"""The pure parts of benchmarks/model/occupancy_gpu.py (the GPU run itself is the lead's to do)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "model" / "occupancy_gpu.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("occupancy_gpu", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_arch_flag(script):
    assert script.arch_flag(9, 0) == "sm_90"
    assert script.arch_flag(10, 0) == "sm_100"
    assert script.arch_flag(8, 6) == "sm_86"


def test_plan_covers_at_least_200_configs_within_kernel_limits(script):
    optin = 227 * 1024
    functions = []
    for name, (_, bound) in script.KERNELS.items():
        for r in script.MAXRREGCOUNTS:
            static = 12 * 1024 if name == "static_tile" else 0
            functions.append({"key": f"{name}@{r}", "max_threads": bound or 1024,
                              "max_dynamic": optin - static})
    plan = script.plan_configs(functions)
    assert len(plan) >= 200
    assert len({(p["block_size"], p["dynamic_smem"]) for p in plan}) >= 50
    for p in plan:
        f = next(f for f in functions if f["key"] == p["function"])
        assert p["block_size"] <= f["max_threads"]
        assert p["dynamic_smem"] <= f["max_dynamic"]
    # The largest allowed dynamic size is always tried.
    assert any(p["dynamic_smem"] == optin - 12 * 1024 for p in plan)


def test_summary_counts_agreement_per_group(script):
    records = [
        {"group": "a", "agree": True}, {"group": "a", "agree": False},
        {"group": "b", "agree": True},
    ]
    groups = script.summarize(records)
    assert groups == {"a": {"total": 2, "agree": 1, "mismatch": 1},
                      "b": {"total": 1, "agree": 1, "mismatch": 0}}
    table = script.summary_table(groups).splitlines()
    assert table[-1].split()[-3:] == ["3", "2", "1"]


def test_kernel_source_compiles_with_nvcc_when_available(script, tmp_path):
    try:
        nvcc = script.find_nvcc()
    except SystemExit:
        pytest.skip("no nvcc here")
    src = tmp_path / "k.cu"
    src.write_text(script.KERNEL_SOURCE)
    proc = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-maxrregcount=64", "-o",
                           str(tmp_path / "k.cubin"), str(src)], capture_output=True, text=True)
    if proc.returncode != 0 and "cicc" in proc.stderr + proc.stdout and "not found" in proc.stderr:
        pytest.skip(f"nvcc incomplete here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr
    data = (tmp_path / "k.cubin").read_bytes()
    assert data[:4] == b"\x7fELF"
    for name in script.KERNELS:
        assert name.encode() in data
