"""One typed Report, one emitter per format (cudalens.report.emit) for analyze, check and profile."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import cudalens
from cudalens.errors import InputError
from cudalens.findings import Finding
from cudalens.guided.merge import Guided, merge_guided
from cudalens.report.emit import FORMATS, emit
from cudalens.triage.baseline import fingerprint

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "access" / "stride_copy.cu"
TRACE = ROOT / "tests" / "fixtures" / "profile" / "h100_transpose.tsv"


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    folder = tmp_path_factory.mktemp("emit")
    shutil.copy(EXAMPLE, folder / EXAMPLE.name)
    return folder / EXAMPLE.name


def test_sarif_and_html_are_made_from_the_lines_the_report_carries(copied, tmp_path):
    report = cudalens.analyze(str(copied), compile=False, use_config=False)
    located = [f for f in report.ranked if f.line]
    assert located and str(copied) in report.sources
    before = {fmt: emit(report, fmt) for fmt in ("sarif", "html")}
    moved = tmp_path / "gone.cu"
    shutil.move(str(copied), moved)  # the emitters open no file: the output cannot change
    try:
        assert {fmt: emit(report, fmt) for fmt in ("sarif", "html")} == before
    finally:
        shutil.move(str(moved), copied)
    results = json.loads(before["sarif"])["runs"][0]["results"]
    first = located[0]
    text = report.line(first.file, first.line)
    assert text.strip() and results[0]["partialFingerprints"]["cudalensFingerprint/v1"] == fingerprint(first, text)
    assert fingerprint(first, text) != fingerprint(first, "")  # the carried line is what the fingerprint reads
    assert "hit" in before["html"] and text.strip().split()[0] in before["html"]


def test_the_guided_analysis_is_typed_and_serializes_as_merge_guided(copied):
    report = cudalens.analyze(str(copied), compile=False, use_config=False)
    guided = report.guided
    assert isinstance(guided, Guided) and all(isinstance(f, Finding) for f in guided.findings)
    records = [rec for fa in report.analysis.files for rec in fa.kernels]
    assert guided.to_dict() == merge_guided(records, report.analysis.findings)
    assert [(f.rule, f.line) for f in guided.findings] == [(d["rule"], d["line"]) for d in guided.finding_records]
    assert report.to_dict()["schema"] == "cudalens/analysis-1" and "cross_checks" not in report.to_dict()
    assert "cross_checks" in report.guided_document() and report.guided_document()["suppressed"] == {}


def test_analyze_check_and_profile_print_what_the_one_dispatcher_emits(copied, capsys):
    from cudalens.cli import main

    folder = str(copied.parent)
    for fmt in ("sarif", "concise", "json"):
        assert main(["check", folder, "--no-compile", "--no-config", "--format", fmt]) == 0
        printed = capsys.readouterr().out
        assert printed == emit(cudalens.check([folder], compile=False, use_config=False), fmt)
    for fmt in ("sarif", "text"):
        main(["analyze", str(copied), "--no-compile", "--no-config", "--format", fmt])
        printed = capsys.readouterr().out
        assert printed == emit(cudalens.analyze(str(copied), compile=False, use_config=False), fmt)
    prof = cudalens.profile(["./transpose"], trace=str(TRACE), cc="9.0")
    assert isinstance(prof, cudalens.Report) and prof.command == "profile" and cudalens.Profile is cudalens.Report
    main(["profile", "--trace", str(TRACE), "--cc", "9.0", "--format", "json", "--", "./transpose"])
    assert capsys.readouterr().out == emit(prof, "json")
    assert [f.rule for f in prof.ranked] == [f["rule"] for f in prof.to_dict()["findings"]]


def test_a_format_a_command_has_not_is_one_clear_error(copied):
    prof = cudalens.profile(["./transpose"], trace=str(TRACE), cc="9.0")
    with pytest.raises(InputError, match="not a format of profile"):
        emit(prof, "concise")
    with pytest.raises(InputError, match="not a format"):
        emit(cudalens.analyze(str(copied), compile=False, use_config=False), "xml")
    assert set(FORMATS) >= {"json", "sarif", "html", "text", "concise", "github", "statistics"}
