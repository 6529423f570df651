"""The pure parts of benchmarks/model/validate_labs.py (rows, agreement, top rule, rendering), on synthetic
inputs; the script is imported by path, no GPU needed."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

from cudalens.findings import Finding, Priority
from cudalens.profile.ncu import LegacyMetrics

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "model" / "validate_labs.py"


@pytest.fixture(scope="module")
def vl():
    spec = importlib.util.spec_from_file_location("validate_labs_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def metrics(kernel="k", **values) -> LegacyMetrics:
    fields = {f.name: None for f in dataclasses.fields(LegacyMetrics)}
    fields.update(kernel=kernel, launches=1)
    fields.update(values)
    return LegacyMetrics(**fields)


def acc(line, space, op, *, sectors=None, waves=None, ways=None, loops=(), pattern="p"):
    return {"line": line, "array": "a", "space": space, "op": op, "bytes_per_thread": 4,
            "sectors_per_request": sectors, "bank_conflict_ways": ways, "wavefronts_per_request": waves,
            "pattern": pattern, "loop_lines": list(loops)}


def kern(name="k", accesses=(), branches=(), occ=None, regs=None):
    k = {"name": name, "file": "f.cu", "line": 1, "accesses": list(accesses), "branches": list(branches)}
    if occ is not None:
        k["occupancy"] = {"occupancy": occ}
    if regs is not None:
        k["registers"] = regs
    return k


def by_q(rows):
    return {r["quantity"]: r for r in rows}


def finding(rule, kernel, priority=Priority.HIGH, impact=None, status="flagged", line=3):
    return Finding(rule, priority, "s", kernel, "f.cu", line, "m", "fix it", impact=impact, status=status)


# ---- predictions ------------------------------------------------------------------------------

def test_ratio_prediction_single_value_mean_and_mixed(vl):
    same = [acc(3, "global", "load", sectors=5.0), acc(4, "global", "load", sectors=5.0)]
    assert vl.ratio_prediction(same, "global", "load") == (5.0, "every access")
    equal_loops = [acc(3, "shared", "store", waves=1.0), acc(4, "shared", "store", waves=32.0)]
    value, how = vl.ratio_prediction(equal_loops, "shared", "store")
    assert value == 16.5 and "mean" in how
    different_loops = [acc(3, "global", "load", sectors=1.0), acc(6, "global", "load", sectors=32.0, loops=(5,))]
    assert vl.ratio_prediction(different_loops, "global", "load")[0] is None
    unmodelled = [acc(3, "global", "load", sectors=None, pattern="parameter-dependent")]
    value, how = vl.ratio_prediction(unmodelled, "global", "load")
    assert value is None and "not modelled" in how
    assert vl.ratio_prediction(same, "shared", "load") == (None, "no such access")


def test_ratio_prediction_derives_wavefronts_from_ways_only_for_4_byte_words(vl):
    a = acc(3, "shared", "load", ways=2.0)
    assert vl.ratio_prediction([a], "shared", "load")[0] == 2.0
    a["bytes_per_thread"] = 8
    value, how = vl.ratio_prediction([a], "shared", "load")
    assert value is None and "not modelled" in how


# ---- rows and agreement ---------------------------------------------------------------------

def test_exact_ratio_is_strict_where_crosscheck_tolerates(vl):
    k = kern(accesses=[acc(3, "global", "load", sectors=4.0)])
    rows = by_q(vl.kernel_rows("f.cu", (1,), k, metrics(global_ld_sectors_per_request=4.3)))
    r = rows["global load sectors/request"]
    assert r["predicted"] == 4.0 and r["measured"] == 4.3
    assert r["agree"] is False and r["within_tolerance"] is True
    rows = by_q(vl.kernel_rows("f.cu", (1,), k, metrics(global_ld_sectors_per_request=4.0)))
    assert rows["global load sectors/request"]["agree"] is True


def test_mixed_stores_compared_by_their_mean(vl):
    k = kern(accesses=[acc(3, "shared", "store", waves=1.0), acc(4, "shared", "store", waves=32.0)])
    r = by_q(vl.kernel_rows("f.cu", (4,), k, metrics(shared_st_wavefronts_per_request=16.5)))[
        "shared store wavefronts/request"]
    assert r["predicted"] == 16.5 and r["agree"] is True
    r = by_q(vl.kernel_rows("f.cu", (4,), k, metrics(shared_st_wavefronts_per_request=1.0)))[
        "shared store wavefronts/request"]
    assert r["agree"] is False


def test_divergence_rows(vl):
    div = kern(branches=[{"line": 5, "divergent": True}])
    rows = by_q(vl.kernel_rows("f.cu", (11,), div, metrics(branch_efficiency=80.0), divergent_targets=512.0))
    assert rows["divergence (branch efficiency %)"]["agree"] is True
    assert rows["divergence (divergent branch targets)"]["agree"] is True
    rows = by_q(vl.kernel_rows("f.cu", (11,), div, metrics(branch_efficiency=99.9), divergent_targets=0.0))
    assert rows["divergence (branch efficiency %)"]["agree"] is False
    assert rows["divergence (divergent branch targets)"]["agree"] is False
    uni = kern(branches=[{"line": 5, "divergent": False}])
    rows = by_q(vl.kernel_rows("f.cu", (11,), uni, metrics(branch_efficiency=70.0), divergent_targets=3.0))
    assert rows["divergence (branch efficiency %)"]["agree"] is False
    assert rows["divergence (divergent branch targets)"]["agree"] is False
    rows = by_q(vl.kernel_rows("f.cu", (11,), kern(), metrics(branch_efficiency=None)))
    assert rows["divergence (branch efficiency %)"]["agree"] is True  # no branch predicted, none ran
    unknown = kern(branches=[{"line": 5, "divergent": None}])
    rows = by_q(vl.kernel_rows("f.cu", (11,), unknown, metrics(branch_efficiency=100.0), divergent_targets=0.0))
    assert rows["divergence (branch efficiency %)"]["agree"] is None


def test_occupancy_and_registers(vl):
    k = kern(occ=0.75, regs=32)
    rows = by_q(vl.kernel_rows("f.cu", (15,), k, metrics(theoretical_occupancy=0.75, registers_per_thread=32.0)))
    assert rows["theoretical occupancy %"]["predicted"] == 75.0 and rows["theoretical occupancy %"]["agree"] is True
    assert rows["registers/thread"]["agree"] is True
    rows = by_q(vl.kernel_rows("f.cu", (15,), k, metrics(theoretical_occupancy=0.7, registers_per_thread=40.0)))
    assert rows["theoretical occupancy %"]["agree"] is False and rows["registers/thread"]["agree"] is False


def test_missing_counters_is_a_failed_row(vl):
    rows = vl.kernel_rows("f.cu", (1,), kern(), None)
    assert len(rows) == 1 and rows[0]["agree"] is False


# ---- top rule and pairs -----------------------------------------------------------------------

def test_top_rule_check(vl):
    fs = [finding("E6", "bad", Priority.INFO), finding("G2", "bad", impact=0.2), finding("G3", "other", impact=0.9),
          finding("V1", "bad", Priority.HIGH, impact=1.0)]
    top = vl.top_rule_check(fs, "bad", "G2")
    assert top["top_rule"] == "G2" and top["top_is_rule"] is True and top["rule_position"] == 1
    assert "V1" not in top["ranked_rules"] and "G3" not in top["ranked_rules"]
    top = vl.top_rule_check(fs, "bad", "E6")
    assert top["top_is_rule"] is False and top["rule_position"] == 2
    top = vl.top_rule_check([finding("G2", "bad", status="downgraded"), finding("E6", "bad", Priority.INFO)], "bad", "G2")
    assert top["top_rule"] == "E6" and top["top_is_rule"] is False
    assert vl.top_rule_check([], "bad", "G2")["top_is_rule"] is False


def test_pair_row_speedup(vl):
    top = {"top_rule": "G2", "top_is_rule": True}
    p = vl.pair_row(1, "lab", "bad", "good", "G2", top, 2e-5, 1e-5)
    assert p["speedup"] == 2.0 and p["good_faster"] is True and p["bad_time_us"] == 20.0
    p = vl.pair_row(1, "lab", "bad", "good", "G2", top, 1e-5, 1.1e-5)
    assert p["good_faster"] is False
    assert vl.pair_row(1, "lab", "bad", "good", "G2", top, None, 1e-5)["good_faster"] is None


# ---- summary and rendering -----------------------------------------------------------------------

def _doc(vl):
    k = kern(accesses=[acc(3, "global", "load", sectors=4.0)], branches=[{"line": 5, "divergent": True}])
    rows = vl.kernel_rows("f.cu", (1,), k, metrics(global_ld_sectors_per_request=5.0, branch_efficiency=50.0))
    pairs = [vl.pair_row(1, "lab-one", "badk", "goodk", "G2", {"top_rule": "G2", "top_is_rule": True}, 2e-5, 1e-5),
             vl.pair_row(2, "lab-two", "bad2", "good2", "G3", {"top_rule": "E6", "top_is_rule": False}, 1e-5, 2e-5)]
    return {"device": "Test GPU", "driver": "1.0", "date": "today", "command": "cmd", "rows": rows, "pairs": pairs,
            "skipped": [{"lab": 5, "name": "pinned-transfer", "reason": "host transfer"}],
            "summary": vl.summarize(rows, pairs)}


def test_summarize_counts(vl):
    s = _doc(vl)["summary"]
    assert s["comparisons"] == 2 and s["agree"] == 1
    assert s["by_quantity"]["global load sectors/request"] == {"agree": 0, "disagree": 1, "not_comparable": 0}
    assert s["pairs"] == 2 and s["top_rule_correct"] == 1 and s["good_faster"] == 1


def test_render_markdown_and_summary(vl):
    doc = _doc(vl)
    md = vl.render_markdown(doc)
    assert "**1/2 comparisons agree**" in md
    assert "| 1 lab-one | badk | goodk | G2 | G2 | yes | 20 | 10 | 2 | yes |" in md
    assert "| f.cu | k | global load sectors/request | 4 | 5 | NO |" in md
    assert "lab 5 pinned-transfer: host transfer" in md
    text = vl.render_summary(doc)
    assert text.splitlines()[-1].startswith("1/2 comparisons agree; top-ranked rule right for 1/2; good faster for 1/2")


# ---- the launch plan ------------------------------------------------------------------------------

def test_scalar_kinds_and_launch_args(vl):
    assert vl.scalar_kind("const int") == "i32" and vl.scalar_kind("unsigned") == "u32"
    assert vl.scalar_kind("long long") == "i64" and vl.scalar_kind("float") == "f32"
    with pytest.raises(ValueError):
        vl.scalar_kind("half2")
    P = type("P", (), {})
    def param(name, type_, ptr):
        p = P()
        p.name, p.type, p.is_pointer = name, type_, ptr
        return p
    args = vl.launch_args([param("out", "float*", True), param("in", "const float*", True), param("n", "int", False)],
                          {"n": 7})
    assert args == [["ptr", 0], ["ptr", 1], ["i32", 7]]
    with pytest.raises(ValueError):
        vl.launch_args([param("m", "int", False)], {})


def test_plan_launches_every_pair_kernel_with_known_values(vl):
    from cudalens.labs import all_labs
    from cudalens.labs.runner import kernel_path
    from cudalens.source.parse import parse_file

    plans = vl._plan()
    for lab in all_labs():
        if lab.number in vl.SKIPPED_LABS:
            assert not lab.pairs
            continue
        mine = [p for p in plans if p.file == lab.kernel_file and lab.number in p.labs]
        assert mine, f"lab {lab.number} {lab.name} not in the plan"
        for pair in lab.pairs:  # both kernels of a pair in one plan: one launch configuration
            assert any({pair.bad, pair.good} <= {ln.kernel for ln in p.launches} for p in mine)
    for plan in plans:
        params = {k.name: k.params for k in parse_file(str(kernel_path(plan.file))).kernels}
        for ln in plan.launches:
            vl.launch_args(params[ln.kernel], plan.values)  # raises on a missing value or unknown type
            assert ln.block == plan.block


def test_registers_row_raises_ptxas_count_to_ncus_floor(vl):
    few = by_q(vl.kernel_rows("f.cu", (1,), kern(regs=10), metrics(registers_per_thread=16.0)))["registers/thread"]
    assert (few["predicted"], few["agree"], few["note"]) == (16, True, "ptxas: 10")
    many = by_q(vl.kernel_rows("f.cu", (1,), kern(regs=27), metrics(registers_per_thread=27.0)))["registers/thread"]
    assert (many["predicted"], many["agree"], many["note"]) == (27, True, "")
    wrong = by_q(vl.kernel_rows("f.cu", (1,), kern(regs=27), metrics(registers_per_thread=32.0)))["registers/thread"]
    assert wrong["agree"] is False


def test_shared_rows_name_the_counter_they_compare(vl):
    k = kern(accesses=[acc(3, "shared", "store", ways=1.0, waves=1.0)])
    sass = metrics(shared_st_wavefronts_per_request=1.0, shared_wavefronts_source="sass",
                   shared_st_wavefronts_per_request_l1tex=1.0854)
    row = by_q(vl.kernel_rows("f.cu", (1,), k, sass))["shared store wavefronts/request"]
    assert row["agree"] is True and "sass" in row["note"] and "1.0854" in row["note"]
    old = metrics(shared_st_wavefronts_per_request=1.0854, shared_wavefronts_source="l1tex")
    row = by_q(vl.kernel_rows("f.cu", (1,), k, old))["shared store wavefronts/request"]
    assert row["agree"] is False and "contention" in row["note"]
