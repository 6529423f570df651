"""Issue 27's patterns (tests/access/ptx/issue27_patterns.cu) in the compiled access model, and the CPU
side of their GPU run (benchmarks/issue27_patterns_gpu.py): the plan launches kernels that exist with
the parameters they take, inputs large enough for the launch, and the commands build with line
information and profile with per-instruction counters."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from cudalens.access.ptx_eval import evaluate

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



def _line(text: str) -> int:
    return next(i for i, t in enumerate(PATTERNS.read_text().splitlines(), 1) if text in t)


def _at(ev, text: str, quantity: str):
    line = _line(text)
    return next(p for p in ev.predictions if p.line == line and p.quantity == quantity)


def test_a_value_chosen_under_a_loaded_branch_is_null_naming_the_load(module):
    """Pattern 1: `index` is set under `if (cdf[x] >= u[i]) { index = x; break; }` (an implicit
    flow): the load at arrayX[index] is a null naming the loaded data, never a number."""
    ev = evaluate(module, _fn(module, "find_index"), (128, 1, 1), (8, 1, 1), {4: 1000})
    p = _at(ev, "// chosen under a branch", "global load sectors/request")
    assert p.value is None and p.low is None
    assert p.reason.startswith("data-dependent: value chosen under a branch (line ")
    assert f"(line {_line('if (cdf[x] >= u[i])')})" in p.reason and "loaded at line" in p.reason
    # the store at xj[i] does not depend on the data: still a number
    assert _at(ev, "// chosen under a branch", "global store sectors/request").value == 8.0


def test_small_sizes_are_tried_for_a_parameter_in_an_address(module):
    """Pattern 2: with hid unknown the large trials agree (5.75) but hid = 16 gives 5.0: a range."""
    fn = _fn(module, "hid_index")
    blocks = tuple((0, y, 0) for y in range(4))
    ev = evaluate(module, fn, (16, 16, 1), (1, 4, 1), blocks=blocks)
    p = _at(ev, "// hid index", "global load sectors/request")
    assert p.value is None and (p.low, p.high) == (5.0, 6.0)
    assert "16}: 5.0" in p.condition and "256}: 5.75" in p.condition
    known = _at(evaluate(module, fn, (16, 16, 1), (1, 4, 1), {2: 16}, blocks=blocks), "// hid index",
                "global load sectors/request")
    assert known.value == 5.0


def test_a_parameter_only_in_a_guard_gets_the_large_trials(module):
    from cudalens.access.ptx_eval import PLAUSIBLE
    from cudalens.access.ptx_slice import params_at_addresses

    fn = _fn(module, "predicated_shared")
    assert fn.params[2].name not in params_at_addresses(fn)  # k only decides which lanes store
    ev = evaluate(module, fn, (128, 1, 1), (2, 1, 1))
    p = _at(ev, "// plain store", "global load sectors/request")
    assert p.value == 4.0 and p.condition.endswith(", ".join(map(str, PLAUSIBLE)))
