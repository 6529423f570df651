"""Suppression comments, rule selection, baselines, columns and impact estimates."""

from __future__ import annotations

import pytest

from cudalens.findings import Finding, Priority, sort_findings
from cudalens.triage import SourceLines, TriageOptions, locate_column, triage
from cudalens.triage.baseline import (
    Baseline,
    baseline_document,
    fingerprint,
    load_baseline,
)
from cudalens.triage.select import chapter, matches, selected, validate
from cudalens.triage.suppress import parse_suppressions


def _f(rule: str, line: int | None, *, file: str = "k.cu", kernel: str | None = "k", message: str = "m",
       impact: float | None = None, runs: float | None = None, priority: Priority = Priority.HIGH) -> Finding:
    return Finding(rule, priority, "BPG", kernel, file, line, message, "fix", impact=impact, runs=runs)


SRC = """__global__ void k(float *a) {
    // cudalens: ignore[G8]
    float x = a[0];
    float y = a[1];  // cudalens: ignore[D1, SH]
    float z = a[2];  /* cudalens: ignore */
    float w = a[3];
}
"""


def test_line_and_line_above_suppress_only_the_named_rules():
    s = parse_suppressions(SRC)
    assert s.suppresses("G8", 3) == "comment"  # the comment line above
    assert s.suppresses("G1", 3) is None
    assert s.suppresses("D1", 4) == "comment" and s.suppresses("SH5", 4) == "comment"  # chapter prefix
    assert s.suppresses("G8", 4) is None
    assert s.suppresses("Y1", 5) == "comment"  # bare ignore: every rule
    assert s.suppresses("G8", 6) is None  # a trailing directive on line 5 does not reach line 6


def test_ignore_file_and_case():
    s = parse_suppressions("// CUDALENS: ignore-file[sh5,E6]\nint x;\n")
    assert s.suppresses("SH5", 2) == "file-comment" and s.suppresses("E6", None) == "file-comment"
    assert s.suppresses("SH1", 2) is None


def test_selectors_match_ids_and_whole_chapters():
    assert chapter("SH5") == "SH" and chapter("G10") == "G"
    assert matches("SH5", "SH") and matches("SH5", "sh5") and not matches("SH5", "S")
    assert not matches("G10", "G1")
    assert selected("SH5", (), ()) and not selected("SH5", (), ("SH",))
    assert selected("SH5", ("SH5",), ("SH",))  # the more specific selector wins
    assert not selected("SH5", ("SH",), ("SH5",))
    assert not selected("G1", ("SH",), ())
    with pytest.raises(ValueError, match="--select: unknown rule or chapter 'Q9'"):
        validate(["G1,Q9"], {"G1", "SH5"}, "--select")
    assert validate(["g1, sh"], {"G1", "SH5"}, "x") == ("G1", "SH")


def test_triage_counts_what_it_leaves_out(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(SRC)
    fs = [_f("G8", 3, file=str(path)), _f("G1", 3, file=str(path)), _f("D1", 4, file=str(path)),
          _f("Y1", 6, file=str(path))]
    t = triage(fs, TriageOptions(ignore=("Y",)))
    assert [f.rule for f in t.kept] == ["G1"]
    assert t.suppressed == {"ignored": 1, "comment": 2}
    assert t.summary() == "3 suppressed (1 by --ignore/--select, 2 by comment)"


def test_baseline_survives_an_unrelated_line_above(tmp_path):
    before = "__global__ void k(float *a) {\n  for (int i = 0; i < 9; ++i) s += a[0];\n}\n"
    after = "// a new comment\n__global__ void k(float *a) {\n  int unrelated = 1;\n  for (int i = 0; i < 9;  ++i) s += a[0];\n}\n"
    f_before = _f("G8", 2, file=str(tmp_path / "k.cu"))
    doc = baseline_document([(f_before, fingerprint(f_before, before.splitlines()[1]))])
    (tmp_path / "base.json").write_text(__import__("json").dumps(doc))
    base = load_baseline(str(tmp_path / "base.json"))
    (tmp_path / "k.cu").write_text(after)
    moved = _f("G8", 4, file=str(tmp_path / "k.cu"))
    other = _f("G1", 4, file=str(tmp_path / "k.cu"))
    t = triage([moved, other], TriageOptions(baseline=base))
    assert [f.rule for f in t.kept] == ["G1"] and t.suppressed == {"baseline": 1}
    # editing the flagged line itself makes the finding new
    (tmp_path / "k.cu").write_text(after.replace("a[0]", "a[1]"))
    assert [f.rule for f in triage([moved], TriageOptions(baseline=base)).kept] == ["G8"]


def test_baseline_counts_duplicates():
    f = _f("G8", 2)
    base = Baseline({fingerprint(f, "x = a[0];"): 1})
    new, known = base.filter([(f, fingerprint(f, "x = a[0];")), (f, fingerprint(f, "x = a[0];"))])
    assert len(new) == 1 and len(known) == 1


def test_bad_baseline_names_the_file(tmp_path):
    p = tmp_path / "b.json"
    p.write_text("{}")
    with pytest.raises(ValueError, match="b.json: not a cudalens baseline"):
        load_baseline(str(p))
    with pytest.raises(ValueError, match="cannot read"):
        load_baseline(str(tmp_path / "missing.json"))


def test_min_impact_keeps_findings_without_an_estimate():
    fs = [_f("SH1", 1, impact=0.9, runs=16), _f("SH1", 2, impact=0.01, runs=1), _f("E6", 3)]
    t = triage(fs, TriageOptions(min_impact=0.05), SourceLines({"k.cu": "a\nb\nc\n"}))
    assert [f.line for f in t.kept] == [1, 3] and t.suppressed == {"min-impact": 1}


def test_column_points_at_the_named_access():
    line = "    out[i] = in[i - 1] + in[i + 1];"
    assert locate_column(_f("G2", 1, message="global load of in[i + 1] is misaligned"), line) == line.index("in[i + 1]") + 1
    assert locate_column(_f("D1", 1, message="branch `tid == 0` splits"), "  if (tid == 0) {") == 7
    assert locate_column(_f("E6", 1, message="no bounds"), "   __global__ void k()") == 4


def test_ranking_weights_cost_by_runs():
    epilogue = _f("SH1", 10, impact=0.9, runs=1.0, priority=Priority.MEDIUM)
    inner = _f("SH1", 5, impact=0.5, runs=64.0, priority=Priority.MEDIUM)
    unknown = _f("SH1", 1, priority=Priority.MEDIUM)
    assert sort_findings([epilogue, unknown, inner]) == [inner, epilogue, unknown]
    assert inner.to_dict()["impact_estimate"] == {"cost": 0.5, "cost_measures": None, "runs_per_thread": 64.0,
                                                  "score": 32.0}


def test_template_instantiations_collapse_into_one_finding():
    from cudalens.triage import collapse_instantiations

    a = _f("I12", 10, kernel="_Z7reduce7IfLj256EEvPKT_")
    b = _f("I12", 10, kernel="_Z7reduce7IdLj128EEvPKT_")
    c = _f("I12", 11, kernel="_Z7reduce7IdLj128EEvPKT_")
    d = _f("I1", 10, kernel="reduce7")
    out = collapse_instantiations([a, b, c, d])
    assert [f.line for f in out] == [10, 11, 10]
    assert out[0].evidence[-1].fact == "other_instantiations" and out[0].evidence[-1].value == 1
