"""Issue 27's patterns (tests/access/ptx/issue27_patterns.cu) in the compiled access model, and the CPU
side of their GPU run (benchmarks/model/issue27_patterns_gpu.py): the plan launches kernels that exist with
the parameters they take, inputs large enough for the launch, and the commands build with line
information and profile with per-instruction counters."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from _sources import entry, line_of
from cudalens.access.ptx_eval import evaluate

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = ROOT / "tests" / "access" / "ptx" / "issue27_patterns.cu"
SCRIPT = ROOT / "benchmarks" / "model" / "issue27_patterns_gpu.py"


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
    return entry(module, name, exact=True)


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
    return line_of(PATTERNS, text)


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


def test_predicated_shared_counts_the_warps_with_no_lane_on(module):
    """Pattern 4, by hand (k = 40 of 128 threads): the load sh[2t] takes 2 wavefronts in warp 0 and
    1 in warp 1 (8 lanes), warps 2 and 3 have no lane on: over the 2 warps that take the side, 1.5
    (N-way 1); over all 4 that reach the branch (what ncu counts where ptxas predicated it), 0.75,
    N-way 0. The store sh[4t]: 4 + 1 wavefronts, N-way 2 over 2 warps, 1 over 4."""
    ev = evaluate(module, _fn(module, "predicated_shared"), (128, 1, 1), (2, 1, 1), {2: 40})
    ld = _at(ev, "// predicated load", "shared load wavefronts/request")
    st = _at(ev, "// predicated store", "shared store wavefronts/request")
    assert (ld.value, ld.nway, ld.nway_predicated) == (1.5, 1.0, 0.0)
    assert (st.value, st.nway, st.nway_predicated) == (2.5, 2.0, 1.0)
    plain = _at(ev, "// plain store", "shared store wavefronts/request")
    assert plain.nway_predicated is None  # not under a branch: every warp takes it


def test_a_predicated_measured_line_is_compared_with_the_predicated_figure(module):
    from cudalens.profile.ncu_source import LineCounter, check_lines

    ev = evaluate(module, _fn(module, "predicated_shared"), (128, 1, 1), (2, 1, 1), {2: 40})
    st = _at(ev, "// predicated store", "shared store wavefronts/request")
    c = {(st.kernel, st.file, st.line, "shared", "store"): LineCounter(st.kernel, st.file, st.line, "shared", "store",
                                                                       8.0, 1, None, None, 1.0, 10.0, predicated=True)}
    (chk,) = check_lines(ev.predictions, c, st.kernel)
    assert (chk.predicted, chk.measured, chk.agree) == (1.0, 1.0, True)
    unpredicated = {k: LineCounter(*k, 8.0, 1, None, None, 2.0, 20.0) for k in c}
    (chk2,) = check_lines(ev.predictions, unpredicated, st.kernel)
    assert (chk2.predicted, chk2.measured, chk2.agree) == (2.0, 2.0, True)


def _source_model():
    from cudalens.access.model import analyze_model
    from cudalens.source.limits import Budget
    from cudalens.source.parse import parse_file

    budget = Budget()
    return analyze_model(parse_file(str(PATTERNS), (), budget), budget=budget)


def test_shared_memory_behind_a_conversion_operator_or_a_cast_has_shared_rows():
    kernels = {k.name: k for k in _source_model().kernels}
    red = {(a.line, a.op, a.index): a for a in kernels["reduce1"].accesses if a.space == "shared"}
    assert red[(_line("// stage"), "store", "tid")].bank_conflict_ways == 1.0
    inter = red[(_line("// interleaved"), "load", "index")]
    assert inter.array == "sdata" and inter.bytes_per_thread == 4 and inter.bank_conflict_ways == 2.0  # s = 1
    cast = {(a.line, a.op): a for a in kernels["cast_shared"].accesses if a.space == "shared"}
    assert cast[(_line("// cast store"), "store")].bank_conflict_ways == 2.0  # buf[tid * 2], floats
    assert cast[(_line("// cast load"), "load")].array == "buf"


def test_the_interleaved_reduction_is_reported_over_the_whole_loop(module):
    """Pattern 6: sdata[2 * s * tid] with 256 threads is 2-way at s = 1, 4-way at s = 2, 8-way at
    s = 4 and 8 (8 lanes left in warp 0), then fewer lanes: the rule sees the loop-weighted figure
    and its range, not the first iteration's 2-way."""
    from cudalens.pipeline import analyze

    ev = evaluate(module, _fn(module, "reduce1"), (256, 1, 1), (8, 1, 1), {2: 2048})
    p = _at(ev, "// interleaved", "shared load wavefronts/request")
    assert p.iteration_invariant is False and (p.iter_low, p.iter_high) == (1.0, 8.0) and p.value > 3.5
    d = analyze([str(PATTERNS)], block=(256, 1, 1)).to_dict()
    sh1 = [f for f in d["findings"] if f["rule"] == "SH1" and f["line"] == _line("// interleaved")]
    assert sh1 and all("1-way to 8-way over the loop's iterations" in f["message"] for f in sh1)
    assert all(f"{p.value:g} wavefronts per request" in f["message"] for f in sh1)


FIXTURE = ROOT / "tests" / "fixtures" / "ncu_source_h100_issue27.csv"  # benchmarks/model/issue27_patterns_gpu.py's export


def line_checks(module, gpu) -> list:
    """Every measured (kernel, line, quantity) of the pattern kernels next to the model's
    prediction with the launch the GPU run used (all its blocks)."""
    from cudalens.profile.ncu_source import check_lines, line_counters, parse_source_csv

    measured = line_counters(parse_source_csv(FIXTURE.read_text()))
    out = []
    for e in gpu.PLAN:
        fn = _fn(module, e["kernel"])
        g = e["grid"]
        blocks = tuple((x, y, z) for z in range(g[2]) for y in range(g[1]) for x in range(g[0]))
        params = {k: a[1] for k, a in enumerate(e["args"]) if len(a) == 2}
        ev = evaluate(module, fn, e["block"], g, params, blocks=blocks, loop_cap=16, max_steps=60000)
        here = ev.predictions[0].file if ev.predictions else str(PATTERNS)
        counters = {(k, here if Path(f).name == PATTERNS.name else f, ln, s, o): c
                    for (k, f, ln, s, o), c in measured.items() if k == fn.name}
        out += check_lines(ev.predictions, counters, fn.name)
    return out


def test_a_shared_swap_decided_by_data_is_a_range_naming_the_load(module):
    """A compare-and-swap whose lanes the loaded values decide (its addresses do not depend on
    them): no confident number but the N-way's range, from the warps whose lanes all skip it
    counted (0) to the conflict-free swap of the lanes that take it (1), naming the branch."""
    ev = evaluate(module, _fn(module, "gated_swap"), (256, 1, 1), (2, 1, 1))
    p = _at(ev, "// gated swap", "shared store wavefronts/request")
    assert p.value is None and (p.nway_low, p.nway_high) == (0.0, 1.0)
    assert p.reason.startswith("data-dependent: a range, as it runs under a branch (line ")
    assert f"loaded at line {_line('// swap loads')}" in p.reason
    assert _at(ev, "// swap result", "shared load wavefronts/request").value == 1.0


def test_pattern_kernels_agree_with_the_h100_line_by_line(module, gpu):
    """Every line of the pattern kernels that the H100 measured (benchmarks/model/issue27_patterns_gpu.py,
    the committed fixture): a figure that agrees, or a null naming the loaded data it depends on."""
    checks = line_checks(module, gpu)
    assert len(checks) >= 30 and all(c.measured is not None for c in checks)  # predicated lines counted too
    figures = [c for c in checks if c.predicted is not None or c.low is not None]
    assert [c for c in figures if not c.agree] == []
    nulls = [c for c in checks if c not in figures]
    assert nulls and all(c.reason.startswith("data-dependent") and "loaded at line" in c.reason for c in nulls)
    by = {(c.kernel, c.line, c.quantity): c for c in checks}
    # pattern 1: the load at arrayX[index] (the old model: 2.8 sectors, measured 1.03) names the data
    assert by[("find_index", _line("// chosen under a branch"), "global load sectors/request")] in nulls
    # pattern 4: reduce1's interleaved line is predicated SASS; ncu counts the executions of the warps with no
    # lane on (no wavefront each): 47 wavefronts over 64 executions per block in the model, 376 over 512 measured
    inter = by[("reduce1", _line("// interleaved"), "shared load wavefronts/request")]
    assert (inter.predicted, inter.measured) == (round(47 / 64, 4), round(376 / 512, 4))
    # pattern 3: the triangular loops run whole (past the loop cap): every wavefront counted, as measured
    assert by[("lud_diagonal", _line("// divide"), "shared store wavefronts/request")].predicted == round(64 / 15, 4)
    # pattern 2 with the program's hid = 16, pattern 3's triangular lines
    assert by[("hid_index", _line("// hid index"), "global load sectors/request")].predicted == 5.0
    assert sum(1 for c in figures if c.kernel == "lud_diagonal") == 10
