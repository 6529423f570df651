"""Issue 27's patterns (tests/access/ptx/issue27_patterns.cu) in the compiled access model, and the CPU
side of their GPU run (benchmarks/issue27_patterns_gpu.py): the plan launches kernels that exist with
the parameters they take, inputs large enough for the launch, and the commands build with line
information and profile with per-instruction counters."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = ROOT / "tests" / "access" / "ptx" / "issue27_patterns.cu"
SCRIPT = ROOT / "benchmarks" / "issue27_patterns_gpu.py"


@pytest.fixture(scope="module")
def gpu():
    spec = importlib.util.spec_from_file_location("issue27_gpu_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def module(ptx_of):
    return ptx_of(PATTERNS)


def _fn(module, name):
    return next(f for f in module.entries if f.name == name)


def test_plan_launches_the_kernels_with_their_parameters(gpu, module):
    names = {f.name for f in module.entries}
    assert {e["kernel"] for e in gpu.PLAN} == names
    for e in gpu.PLAN:
        fn = _fn(module, e["kernel"])
        assert len(fn.params) == len(e["args"]), e["kernel"]
        for p, arg in zip(fn.params, e["args"]):
            if len(arg) == 3:  # a buffer: a 64-bit pointer parameter
                assert p.size == 8
                assert len(gpu.host_array(*arg)) == arg[2]
            else:
                assert p.size == 4 and len(gpu._pack(arg, None)) == 4
        assert all(b >= 1 for b in (*e["grid"], *e["block"]))


def test_inputs(gpu):
    cdf = gpu.host_array("cdf8", "f8", 1000)
    assert cdf[0] == 0.125 and cdf[7] == 1.0 and cdf[-1] == 1.0
    u = gpu.host_array("u_unit", "f8", 1000)
    assert 0 < u[0] < u[-1] < 1
    m = gpu.host_array("lud", "f4", 64 * 64).reshape(64, 64)
    assert m[3, 3] == 65 and m[3, 4] == 1
    with pytest.raises(ValueError):
        gpu.host_array("nope", "f4", 4)


def test_commands_build_with_lines_and_profile_per_instruction(gpu, tmp_path):
    build, profile, export = gpu.commands("ncu", "nvcc", tmp_path / "a.cubin", tmp_path / "r.ncu-rep")
    assert "-lineinfo" in build and "-cubin" in build and str(gpu.SOURCE) in build
    assert profile[profile.index("--section") + 1] == "SourceCounters"
    assert profile[profile.index("--clock-control") + 1] == "none" and profile[-2:] == ["launch", str(tmp_path / "a.cubin")]
    assert export[export.index("--page") + 1] == "source" and export[export.index("--print-source") + 1] == "cuda,sass"


def test_usage(gpu, capsys):
    assert gpu.main(["nope"]) == 2
    assert gpu.main(["plan"]) == 0 and "find_index" in capsys.readouterr().out

