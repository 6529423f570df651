"""The library side of `cudalens analyze --run/--counters`: gather_evidence, guided_report, and the
V1 rule page (the validation rule whose findings the cross-check makes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.pipeline import Evidence, RunSpec, analyze, gather_evidence, guided_report
from cudalens.errors import InputError
from cudalens.findings import Priority
from cudalens.guided.crosscheck import CrossCheck, disagreement_findings
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import RULES, load_all

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_CU = str(ROOT / "benchmarks" / "ncu_fixture.cu")
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
    with pytest.raises(Exception):
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

