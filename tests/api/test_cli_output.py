"""What the commands print: code frames (--show-source), check's HTML, full width when piped, and
doctor's text giving the same pip command as its JSON."""

from __future__ import annotations

import json
from pathlib import Path

from cudalens.cli import main
from cudalens.report.frames import code_frame

ROOT = Path(__file__).resolve().parents[2]
KERNEL = """__global__ void strided(float* y, const float* x, int n) {
\tint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i * 32] = 2.0f * x[i * 32];
}
"""


def test_code_frame_puts_the_caret_under_the_column():
    lines = KERNEL.splitlines()
    frame = code_frame(lines, 3, 16)
    assert frame == ["  |", "2 |     int i = blockIdx.x * blockDim.x + threadIdx.x;",
                     "3 |     if (i < n) y[i * 32] = 2.0f * x[i * 32];", "  |                ^", "  |"]
    assert frame[2][4:].index("y[") == frame[3][4:].index("^")
    assert code_frame(lines, 99, 1) == [] and code_frame(lines, None) == []


def test_show_source_in_check_and_analyze(tmp_path, capsys):
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    assert main(["check", str(src), "--no-compile", "--select", "G3", "--show-source"]) == 0
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if "3:16" in line and "G3" in line)
    assert out[at + 3].strip().startswith("3 |") and out[at + 4].rstrip().endswith("^")
    assert main(["check", str(src), "--no-compile", "--select", "G3"]) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if " | " in line]
    assert main(["analyze", str(src), "--no-compile", "--select", "G3", "--format", "concise", "--show-source"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("y[i * 32] has lane stride 32 elements: 32 sectors per request instead of 4 "
                           "(no launch found; holds for blocks of 256, 128, 512 threads)")
    assert out[3].startswith("3 | ") and out[4] == "  |" + " " * 16 + "^"
    assert main(["analyze", str(src), "--no-compile", "--select", "G3", "--show-source"]) == 0
    assert "3 |     if (i < n) y[i * 32]" in capsys.readouterr().out


def test_check_writes_html(tmp_path, capsys):
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    page = tmp_path / "r.html"
    assert main(["check", str(tmp_path), "--no-compile", "--format", "html", "-o", str(page)]) == 0
    text = page.read_text()
    assert text.lstrip().lower().startswith("<!doctype html") and "cudalens check" in text and "G3" in text


def test_profile_report_keeps_full_width_when_piped(capsys):
    trace = str(ROOT / "tests" / "fixtures" / "profile" / "h100_transpose.tsv")
    assert main(["profile", "--trace", trace, "--cc", "9.0", "--", "./transpose"]) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(line for line in out if "transposeNoBankConflicts" in line)
    assert "101" in row and "32x32x1" in row  # the whole row on one line, the name not cut
    assert not [line for line in out if "…" in line]
    assert max(map(len, out)) > 80


def test_doctor_text_prints_the_pip_extra_as_json_does(capsys):
    assert main(["doctor", "--format", "json"]) == 0
    fixes = [h["fix"] for h in json.loads(capsys.readouterr().out)["headers"].values() if h["fix"]]
    assert main(["doctor"]) == 0
    text = capsys.readouterr().out
    for fix in fixes:
        assert fix in text
