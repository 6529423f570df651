"""Issue #25 item 2: a hard deadline and memory cap per file, over every stage; special and huge
files refused in one line; the exponential macro chain and the parse-error loop fixed at their cause."""

from __future__ import annotations

import json
import os
import time

import pytest

from cudalens.cli import main
from cudalens.pipeline import analyze_file
from cudalens.source.limits import MAX_FILE_BYTES

GOOD = ("__global__ void g(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) a[i * 2] = 1.0f; }\n")


def macro_chain(n: int = 31) -> str:
    lines = [f"#define M{i} (M{i + 1} + M{i + 1})" for i in range(n)] + [f"#define M{n} 1"]
    return "\n".join(lines) + "\n__global__ void k(float *a) { a[threadIdx.x + M0] = 1.0f; }\n"


PARSE_LOOP = "int main() { float *p; (p q) = 0; return 0; }\n"


def test_macro_fan_out_is_linear(tmp_path):
    p = tmp_path / "m.cu"
    p.write_text(macro_chain())
    t0 = time.monotonic()
    analyze_file(p, compile=False)
    assert time.monotonic() - t0 < 15  # was exponential: minutes


@pytest.mark.parametrize("text", [PARSE_LOOP, "int main() { float *p; cudaMallocHost((p q), 4); ((p) q) = 2; }\n"])
def test_juxtaposed_names_in_parentheses_end(tmp_path, text):
    p = tmp_path / "p.cu"
    p.write_text(text)
    t0 = time.monotonic()
    analyze_file(p, compile=False)
    assert time.monotonic() - t0 < 15  # the rules stage looped forever on ``(p q)``


def _slow_rules(monkeypatch):
    import cudalens.pipeline.stages as stages

    real = stages.run_rules

    def run_rules(ctx, only=None):
        name = os.path.basename(ctx.source.path)
        if name == "hang.cu":
            while True:
                time.sleep(0.1)
        if name == "hog.cu":
            blocks = []
            while True:
                blocks.append(bytearray(64 * 2**20))
        return real(ctx, only)

    monkeypatch.setattr(stages, "run_rules", run_rules)


def test_check_stops_a_file_at_the_deadline_and_reports_the_others(tmp_path, monkeypatch, capsys):
    _slow_rules(monkeypatch)
    (tmp_path / "good.cu").write_text(GOOD)
    (tmp_path / "hang.cu").write_text(GOOD)
    (tmp_path / "hog.cu").write_text(GOOD)
    out = tmp_path / "report.sarif"
    t0 = time.monotonic()
    code = main(["check", str(tmp_path), "--no-compile", "--format", "sarif", "-o", str(out), "--deadline", "4",
                 "--memory-cap", "256"])
    assert time.monotonic() - t0 < 4 + 10
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if "hang.cu" in ln or "hog.cu" in ln]
    assert len(lines) == 2, err
    assert any("hang.cu: stopped in the rules stage at the deadline of 4 s" in ln for ln in lines)
    assert any("hog.cu" in ln and "memory cap" in ln for ln in lines)
    results = json.loads(out.read_text())["runs"][0]["results"]
    assert results and all("good.cu" in res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                           for res in results)


def test_special_and_huge_files_are_refused_in_one_line(tmp_path, capsys):
    fifo = tmp_path / "x.cu"
    os.mkfifo(fifo)
    loop = tmp_path / "self.cu"
    loop.symlink_to(loop)
    big = tmp_path / "big.cu"
    big.write_text("// x\n" * (MAX_FILE_BYTES // 5 + 10))
    (tmp_path / "good.cu").write_text(GOOD)
    for path in (fifo, loop, big, "/dev/zero"):
        t0 = time.monotonic()
        code = main(["analyze", "--no-compile", str(path)])
        err = capsys.readouterr().err
        assert code == 2 and time.monotonic() - t0 < 20, err
        assert len(err.strip().splitlines()) == 1 and "Error" not in err, err
    out = tmp_path / "r.json"
    code = main(["check", str(tmp_path), "--no-compile", "--format", "json", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert {ln.split(":")[1].strip().rsplit("/", 1)[-1] for ln in err.splitlines()} >= {"x.cu", "self.cu", "big.cu"}
    assert [f["path"].rsplit("/", 1)[-1] for f in json.loads(out.read_text())["files"]] == ["good.cu"]
