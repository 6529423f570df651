"""The linter conventions end to end: `cudalens check` / `analyze` with suppressions, selection,
config discovery, baselines, one-line formats, SARIF locations and exit codes (source-only, fast)."""

from __future__ import annotations

import json

import pytest

from cudalens.cli import main

KERNEL = """__global__ void scale_rows(const float *x, const float *scale, float *out, int n) {
    int row = blockIdx.x;
    for (int k = threadIdx.x; k < n; k += blockDim.x) out[row * n + k] = scale[row] * x[row * n + k];
}

__global__ void take_even(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[2 * i];
}

void launch(float *a, float *b, float *c, int n) {
    scale_rows<<<1024, 256>>>(a, b, c, n);
    take_even<<<n / 256, 256>>>(a, b, n);
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "k.cu").write_text(KERNEL)
    monkeypatch.chdir(root)
    return root


_CAPTURE = []


@pytest.fixture(autouse=True)
def _capture(capsys):
    _CAPTURE[:] = [capsys]
    yield
    _CAPTURE.clear()


def run(*args: str, stdout_only: bool = False):
    """Exit code and output of `cudalens ARGS` (stdout, or stdout and stderr together)."""
    code = main(list(args))
    out = _CAPTURE[0].readouterr()
    return code, out.out if stdout_only else out.out + out.err


def concise(*args: str) -> list[str]:
    _, out = run("check", *args, "--no-compile", "--format", "concise", "--select", "G", stdout_only=True)
    return [ln for ln in out.splitlines() if ln.startswith(("src/", "vendor/"))]


def test_concise_lines_carry_path_line_column(project):
    lines = concise("src")
    assert "src/k.cu:3:74: G8 [high] scale[row] is read again" in "\n".join(lines)
    assert any(ln.startswith("src/k.cu:8:25: G3 [high] global load of in[2 * i]") for ln in lines)


def test_suppression_comment_on_the_line_and_above(project):
    text = KERNEL.replace("if (i < n) out[i] = in[2 * i];", "if (i < n) out[i] = in[2 * i];  // cudalens: ignore[G3]")
    text = text.replace("    for (int k", "    // cudalens: ignore[G]\n    for (int k")
    (project / "src" / "k.cu").write_text(text)
    assert concise("src") == []
    _, out = run("check", "src", "--no-compile", "--select", "G")
    assert "2 by comment)" in out  # counted, never silently lost


def test_ignore_file_comment(project):
    (project / "src" / "k.cu").write_text("// cudalens: ignore-file[G3]\n" + KERNEL)
    assert [ln.split(": ")[1].split()[0] for ln in concise("src")] == ["G8"]


def test_select_ignore_and_config_discovery(project):
    assert {ln.split(": ")[1].split()[0] for ln in concise("src", "--ignore", "G8")} == {"G3"}
    (project / "pyproject.toml").write_text('[tool.cudalens]\nignore = ["G3"]\n')
    assert {ln.split(": ")[1].split()[0] for ln in concise("src")} == {"G8"}
    (project / "pyproject.toml").write_text('[tool.cudalens]\nselect = ["Q7"]\n')
    code, out = run("check", "src", "--no-compile")
    assert code == 2 and "[tool.cudalens] select: unknown rule or chapter 'Q7'" in out


def test_baseline_survives_an_unrelated_edit(project):
    code, _ = run("check", "src", "--no-compile", "--select", "G", "--write-baseline", "base.json")
    assert code == 0 and json.loads((project / "base.json").read_text())["schema"] == "cudalens/baseline-1"
    # an unrelated line above both findings: still in the baseline
    (project / "src" / "k.cu").write_text("#include <cuda_runtime.h>\n\n" + KERNEL)
    assert concise("src", "--baseline", "base.json") == []
    code, out = run("check", "src", "--no-compile", "--select", "G", "--baseline", "base.json", "--fail-on", "info")
    assert code == 0 and "2 by baseline" in out
    # a new problem is reported and fails
    (project / "src" / "k.cu").write_text(KERNEL.replace("in[2 * i]", "in[4 * i]"))
    lines = concise("src", "--baseline", "base.json")
    assert len(lines) == 1 and "in[4 * i]" in lines[0]
    code, _ = run("check", "src", "--no-compile", "--select", "G", "--baseline", "base.json", "--fail-on", "high")
    assert code == 1


def test_bad_baseline_is_one_line_and_exit_2(project):
    (project / "base.json").write_text("[1, 2]")
    code, out = run("check", "src", "--no-compile", "--baseline", "base.json")
    assert code == 2 and "base.json: not a cudalens baseline" in out and "Traceback" not in out


def test_github_annotations(project):
    _, out = run("check", "src/k.cu", "--no-compile", "--format", "github", "--select", "G3", stdout_only=True)
    assert out.strip() == ("::error file=src/k.cu,line=8,col=25,title=cudalens G3 [high]::global load of in[2 * i] "
                           "has lane stride 2 elements: 8 sectors per request instead of 4 Fix: let threadIdx.x index "
                           "the contiguous dimension, or stage a tile in shared memory")


def test_sarif_uris_are_repository_relative(project):
    (project / "src" / "deeper").mkdir()
    (project / "src" / "deeper" / "j.cu").write_text(KERNEL)
    _, out = run("check", "src/deeper", "--no-compile", "--format", "sarif", "--select", "G3", stdout_only=True)
    run_ = json.loads(out)["runs"][0]
    loc = run_["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "src/deeper/j.cu"  # relative to the repository, not to DIR
    assert loc["region"] == {"startLine": 8, "startColumn": 25}
    assert str(project) not in out  # no absolute local path anywhere
    assert run_["results"][0]["partialFingerprints"]["cudalensFingerprint/v1"]


def test_check_takes_files_directories_and_exclude(project):
    (project / "vendor").mkdir()
    (project / "vendor" / "v.cu").write_text(KERNEL)
    both = concise("src/k.cu", "vendor")
    assert {ln.split(":")[0] for ln in both} == {"src/k.cu", "vendor/v.cu"}
    assert {ln.split(":")[0] for ln in concise("src", "vendor", "--exclude", "vendor")} == {"src/k.cu"}
    code, out = run("check", "nowhere.cu", "--no-compile")
    assert code == 2 and "nowhere.cu: no such file or directory" in out


def test_fail_on_info_and_min_impact(project):
    code, _ = run("check", "src", "--no-compile", "--select", "E6", "--fail-on", "info")
    assert code == 1  # info findings can fail a build
    code, _ = run("check", "src", "--no-compile", "--select", "E6", "--fail-on", "low")
    assert code == 0
    low = concise("src", "--min-impact", "1000")
    assert all(" G8 " in ln for ln in low)  # G8 has no cost estimate: kept; G3's score is below 1000


def test_analyze_json_carries_the_impact_estimate(project):
    _, out = run("analyze", "src/k.cu", "--no-compile", "--format", "json", "--select", "G3", stdout_only=True)
    doc = json.loads(out)
    est = doc["findings"][0]["impact_estimate"]
    assert est["cost"] == pytest.approx(0.5) and est["runs_per_thread"] == 1.0 and est["score"] == pytest.approx(0.5)
    assert doc["suppressed"]["ignored"] >= 1


def test_piped_text_never_cuts_a_value(project):
    long_name = "a_really_long_array_name_that_would_not_fit_in_eighty_columns_of_a_terminal"
    (project / "src" / "k.cu").write_text(KERNEL.replace("in[2 * i]", f"{long_name}[2 * i]").replace(
        "const float *in,", f"const float *{long_name},"))
    _, out = run("analyze", "src/k.cu", "--no-compile", "--select", "G3")
    assert f"{long_name}[2 * i]" in out  # in the finding line and in the access table, whole
    assert max(len(ln) for ln in out.splitlines()) > 80
