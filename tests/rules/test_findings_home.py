"""Findings have one home: only rules (through ``ctx.finding``) make them, so every finding's id,
priority and section are the catalog's; a detector runs only when the layers it declares exist."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from cudalens.guided.crosscheck import CrossCheck, disagreement_findings
from cudalens.rules.catalog import ITEMS
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import RULES, load_all, rule, run_rules
from cudalens.source.parse import parse_file
from cudalens.trace.kernels import counter_findings, trace_kernel_findings

SRC = Path(__file__).resolve().parents[2] / "src" / "cudalens"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rules"
# making a Finding, or typing its priority or section, anywhere but in a rule
MADE_BY_HAND = re.compile(r"\bFinding\(|\bpriority=Priority\.|\bsection=\"|=\s*Priority\.(HIGH|MEDIUM|MEDIUM_LOW|LOW|INFO)\b")


def test_no_code_outside_rules_makes_a_finding_or_types_its_metadata():
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("rules/") or rel == "findings.py":  # the rules; the type (and its from_dict)
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if MADE_BY_HAND.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []


def test_the_grep_would_catch_a_finding_made_by_hand():
    assert MADE_BY_HAND.search('    return Finding(rule="E2", priority=Priority.INFO, section="BPG 10.3")')
    assert MADE_BY_HAND.search("        earned = Priority.MEDIUM")  # a priority set outside the rules


def _from_catalog(found):
    assert found
    for f in found:
        item = ITEMS[f.rule]
        assert (f.priority, f.section) == (item.priority, item.section), f.rule


def _kernel(**over):
    k = dict(name="k", symbol="_Z1kv", launches=10, total_s=1.0, share=0.9, span_share=0.5, grid=(4, 1, 1),
             block=(256, 1, 1), registers=128, static_shared=0, dynamic_shared=0)
    return SimpleNamespace(**{**k, **over})


def test_traced_kernel_findings_come_from_the_catalog_and_a_small_grid_is_e4():
    occ = {"occupancy": 0.25, "threads_per_block": 256, "limiters": ["registers"]}
    found = trace_kernel_findings(_kernel(), occ, "prog", sm_count=132)
    assert sorted(f.rule for f in found) == ["E1", "E4"]  # the catalog's "more blocks than SMs" (was E2)
    _from_catalog(found)
    assert trace_kernel_findings(_kernel(grid=(264, 1, 1)), None, "prog", sm_count=132) == []


def test_counter_findings_come_from_the_catalog():
    m = SimpleNamespace(gld_efficiency=25.0, gst_efficiency=None, global_ld_sectors_per_request=16.0,
                        global_st_sectors_per_request=None, shared_ld_bank_conflicts_per_request=2.0,
                        shared_st_bank_conflicts_per_request=None, branch_efficiency=50.0,
                        achieved_occupancy=0.2, theoretical_occupancy=1.0)
    found = counter_findings(_kernel(), m, "prog")
    assert sorted(f.rule for f in found) == ["D1", "E1", "G1", "SH1"]
    _from_catalog(found)
    assert all(f.status == "confirmed" and f.file == "prog" for f in found)


def test_v1_comes_from_the_catalog():
    check = CrossCheck(kernel="k", file="k.cu", quantity="branch efficiency", line=7, predicted=99.0,
                       measured=60.0, agree=False, unit="%", relation="≥", tolerance="5 %", counter="c")
    _from_catalog(disagreement_findings([check]))


def test_static_findings_come_from_the_catalog():
    for name in ("E4_bad.cu", "X1_bad.cu", "I6_bad.cu"):
        found, problems = run_rules(RuleContext(source=parse_file(str(EXAMPLES / name))))
        assert problems == []
        _from_catalog(found)


def test_a_detector_runs_only_when_its_layers_exist():
    load_all()
    before = dict(RULES)
    try:
        @rule("T4", name="probe", layers="P", requires=("counters",))
        def probe(ctx):
            """What it does: x. Why it matters: x. Example: x. Fix: x."""
            yield ctx.finding(None, "probe", "none", file="p")

        static = RuleContext(source=parse_file(str(EXAMPLES / "E4_bad.cu")))
        assert list(probe(static)) == []
        measured = RuleContext.without_source("p", counters=SimpleNamespace())
        (f,) = list(probe(measured))
        assert (f.rule, f.priority, f.section) == ("T4", ITEMS["T4"].priority, ITEMS["T4"].section)
        with pytest.raises(RuntimeError, match="not a layer"):
            rule("T4", name="probe", layers="P", requires=("tracee",))
    finally:
        RULES.clear()
        RULES.update(before)
