"""`cudalens tune` on the command line: the report, JSON, and one-line errors with exit code 2."""

from __future__ import annotations

import json

from cudalens.cli import main

BASE = ["--kernel", "gemm<BM,BN,BK,TM,TN>", "--space", "BM=64,128", "--space", "BN=128", "--space", "BK=8,16",
        "--space", "TM=8", "--space", "TN=8", "--const", "M=1024", "--const", "N=1024",
        "--grid", "cdiv(N, BN), M/BM", "--block", "(BM/TM)*(BN/TN)", "--fake", "{}"]


def test_text_report(gemm_source, tmp_path, capsys):
    assert main(["tune", gemm_source, *BASE, "--strategy", "exhaustive", "--db", str(tmp_path / "h.db")]) == 0
    out = capsys.readouterr().out
    assert "configurations: 4 (of 4 before restrictions)" in out
    assert "best: BM=128,BN=128,BK=16,TM=8,TN=8" in out and "P(fastest)" in out and "stability:" in out


def test_json_report_and_resume(gemm_source, tmp_path, capsys):
    args = ["tune", gemm_source, *BASE, "--db", str(tmp_path / "h.db"), "--format", "json", "--strategy", "exhaustive"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["resumed"] is False and first["measured"] == 4
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["resumed"] is True and again["session_id"] == first["session_id"] and again["measured"] == 4


def test_bad_input_is_one_line_and_exit_2(gemm_source, tmp_path, capsys):
    cases = [
        (["--restrict", "__import__('os')"], "not allowed"),
        (["--space", "XX=1,1"], "listed twice"),
        (["--max-fraction", "2"], "--max-fraction"),
        (["--nvcc-flag", "$(touch pwned)"], "nvcc's shell would interpret"),
    ]
    for extra, words in cases:
        assert main(["tune", gemm_source, *BASE, "--db", str(tmp_path / "h.db"), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err
    assert main(["tune", str(tmp_path / "none.cu"), *BASE]) == 2
    assert "no such file" in capsys.readouterr().err
