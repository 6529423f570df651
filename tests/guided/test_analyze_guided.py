"""The library side of `cudalens analyze --run/--counters`: gather_evidence, guided_report, and the
V1 rule page (the validation rule whose findings the cross-check makes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.errors import InputError
from cudalens.findings import Priority
from cudalens.guided.crosscheck import CrossCheck, disagreement_findings
from cudalens.pipeline import Evidence, RunSpec, analyze, gather_evidence, guided_report
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import RULES, load_all

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_CU = str(ROOT / "benchmarks" / "model" / "ncu_fixture.cu")
FIXTURE_CSV = str(ROOT / "tests" / "fixtures" / "ncu_h100_raw.csv")


@pytest.fixture(scope="module")
def fixture_analysis():
    return analyze([FIXTURE_CU], compile=False)


def test_guided_report_only_adds_keys(fixture_analysis):
    plain = fixture_analysis.to_dict()
    merged = guided_report(fixture_analysis, gather_evidence(fixture_analysis, counters=FIXTURE_CSV))
    assert set(plain) < set(merged)
    assert {"counters", "cross_checks", "first_steps", "speed_of_light", "roofline", "measurement",
            "counters_source", "evidence_notes"} <= set(merged) - set(plain)
    assert merged["kernels"] == plain["kernels"]
    static = {(f["rule"], f["kernel"], f["line"]) for f in plain["findings"]}
    assert static <= {(f["rule"], f["kernel"], f["line"]) for f in merged["findings"]}
    assert len(merged["first_steps"]) == 3 and not any("(V1" in s for s in merged["first_steps"])


def test_guided_report_without_evidence_has_no_checks(fixture_analysis):
    merged = guided_report(fixture_analysis)
    assert merged["cross_checks"] == [] and merged["measurement"] is None and merged["evidence_notes"] == []
    assert len(merged["findings"]) == len(fixture_analysis.findings)


def test_counters_of_other_kernels_are_noted(fixture_analysis, tmp_path):
    other = analyze([str(ROOT / "examples" / "saxpy.cu")], compile=False)
    ev = gather_evidence(other, counters=FIXTURE_CSV)
    (note,) = ev.notes
    assert "holds no launch of an analyzed kernel" in note and "copy_stride2" in note
    assert guided_report(other, ev)["cross_checks"] == []


def test_profiling_needs_a_run(fixture_analysis):
    with pytest.raises(InputError, match="--run"):
        gather_evidence(fixture_analysis, counters="run")


def test_run_request_carries_only_compiler_safe_defines(fixture_analysis):
    spec = RunSpec("copy_stride2", (4, 1, 1), (256, 1, 1), ("float32[1024]", "float32[1024]", "int32=1024"),
                   defines=(("EXTRA", None),))
    req = spec.request("src", "f.cu", {"TILE": 8})
    assert req["defines"] == {"TILE": "8", "EXTRA": None} and req["grid"] == [4, 1, 1]
    with pytest.raises(InputError, match="copy_coalesced"):
        gather_evidence(fixture_analysis, run=RunSpec("missing", (1, 1, 1), (32, 1, 1)))


def test_evidence_is_frozen():
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        Evidence().notes = ("x",)  # type: ignore[misc]


def test_v1_is_registered_reads_the_checks_layer_and_needs_it(fixture_analysis):
    load_all()
    rule = RULES["V1"]
    doc = rule.doc
    positions = [doc.find(h) for h in ("What it does", "Why it matters", "Example", "Fix")]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
    assert rule.priority is Priority.INFO and rule.section == "cudalens validation" and rule.id == "V1"
    assert all(needs == {"checks"} for needs in rule.requires)
    # the static pass has no checks layer: the detectors do not run
    assert rule.check(RuleContext(source=fixture_analysis.files[0].model)) == []


def test_v1_findings_of_the_cross_check_match_the_rule():
    check = CrossCheck(kernel="k", file="k.cu", quantity="global load sectors/request", line=3, predicted=4.0,
                       measured=8.0, agree=False, unit="sectors/request", relation="≈", tolerance="10 %",
                       counter="l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    (f,) = disagreement_findings([check])
    assert (f.rule, f.priority, f.section) == ("V1", RULES["V1"].priority, RULES["V1"].section)
    assert f.line == 3 and f.file == "k.cu" and "predicted 4 sectors/request" in f.message



def test_v1_finding_of_a_range_that_misses_says_the_range():
    """A range prediction (predicted None, low..high) that the counter contradicts is a V1 finding
    naming the range (it made analyze --counters fail with a TypeError on llm.c's softmax_forward)."""
    from cudalens.pipeline.line_checks import v1_findings
    from cudalens.profile.ncu_source import LineCheck

    miss = LineCheck("_Z1kPf", "k.cu", 7, "global load sectors/request", None, 9.0, False, "compiled-ptx",
                     "data-dependent: a range", 64.0, 1.0, 4.0)
    fit = LineCheck("_Z1kPf", "k.cu", 8, "global load sectors/request", None, 2.0, True, "compiled-ptx", "", 64.0, 1.0, 4.0)
    found = v1_findings([miss, fit])
    assert [f.line for f in found] == [7]
    assert "predicted 1..4 " in found[0].message and "measured 9 " in found[0].message
    assert found[0].evidence[0].value == [1.0, 4.0]


def test_line_holding_an_inlined_header_helpers_sass_is_checked_with_the_helpers_figure(tmp_path):
    """ptxas may place an inlined helper's load at the call's line: with an imported source page the
    measured call line is compared with the figure of the header line it came from (llm.c's
    load128 and bf16 copies), matched across machines by file name."""
    from cudalens.pipeline.line_checks import check_analysis

    (tmp_path / "h.cuh").write_text("#pragma once\n__device__ __forceinline__ float pick(const float* p, int i) {\n"
                                    "    return p[i];\n}\n")
    (tmp_path / "k.cu").write_text('#include "h.cuh"\n__global__ void strided(float* out, const float* in) {\n'
                                   "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n    out[t] = pick(in, t * 2);\n}\n"
                                   "int main() { strided<<<2, 128>>>(nullptr, nullptr); return 0; }\n")
    head = ('"Line No","Source","Address","Source","Instructions Executed","Address Space",'
            '"L2 Theoretical Sectors Global","L2 Theoretical Sectors Global Ideal","Avg. Predicated-On Threads Executed"')
    page = "\n".join(['"File Path","/elsewhere/k.cu"', '"Function Name","_Z7stridedPfPKf"', head,
                      '"4","    out[t] = pick(in, t * 2);","","","16","","96","64",""',
                      '"","","0x0000000000000100","LDG.E R3, desc[UR4][R2.64]","8","Global","{ld}","32","32"',
                      '"","","0x0000000000000110","STG.E desc[UR4][R4.64], R3","8","Global","32","32","32"']) + "\n"
    a = analyze([str(tmp_path / "k.cu")])
    got = {c.quantity: c for c in check_analysis(a, page.format(ld=64)).checks}
    assert got["global load sectors/request"].predicted == 8 and got["global load sectors/request"].agree is True
    assert got["global store sectors/request"].predicted == 4 and got["global store sectors/request"].agree is True
    wrong = {c.quantity: c for c in check_analysis(a, page.format(ld=32)).checks}  # 4 per request measured
    assert wrong["global load sectors/request"].agree is False
