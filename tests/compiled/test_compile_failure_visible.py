"""A file that does not compile is visible in every format, with what was missing and the fix
(issue #26, pipeline.compile_failure): a quoted include is found in the repository and the compile
retried with its folder; a library header names the extra; anything else names the first error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cudalens.cli import main
from cudalens.pipeline.compile_failure import (
    MAX_FILES,
    diagnose,
    find_in_repository,
    library_of,
    missing_header,
    project_root,
)

KERNEL = "__global__ void k{n}(float* o, const float* i) {{ o[threadIdx.x] = i[threadIdx.x] * {scale}; }}\n"


def _project(tmp: Path) -> Path:
    (tmp / ".git").mkdir()
    (tmp / "Common").mkdir()
    (tmp / "Common" / "helper.h").write_text("#define SCALE 2.0f\n")
    src = tmp / "src"
    src.mkdir()
    (src / "found.cu").write_text('#include "helper.h"\n' + KERNEL.format(n=1, scale="SCALE"))
    (src / "blas.cu").write_text("#include <cublas_v2.h>\n" + KERNEL.format(n=2, scale="2.0f"))
    (src / "broken.cu").write_text(KERNEL.format(n=3, scale="2.0f") + "\nint oops = ;\n")
    return src


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, wheel_toolchain):
    """Every format of one `check` over the project (one compile each; failures are not cached)."""
    src = _project(tmp_path_factory.mktemp("proj"))
    out = {}
    cwd = os.getcwd()
    os.chdir(src.parent)
    try:
        for fmt in ("text", "concise", "github", "json", "sarif"):
            path = src.parent / f"out.{fmt}"
            code = main(["check", "src", "--no-config", "-j", "1", "--format", fmt, "-o", str(path)])
            out[fmt] = (code, path.read_text())
        out["strict"] = (main(["check", "src", "--no-config", "-j", "1", "--strict", "--format", "concise",
                               "-o", str(src.parent / "strict.txt")]), "")
    finally:
        os.chdir(cwd)
    return out


def test_concise_and_github_have_one_diagnostic_per_failed_file_at_the_first_error(outputs):
    concise = outputs["concise"][1].splitlines()
    failed = [ln for ln in concise if " compile-error " in ln]
    assert len(failed) == 2, concise
    blas = next(ln for ln in failed if "blas.cu" in ln)
    assert blas.startswith("src/blas.cu:1:1: ") and "cublas_v2.h" in blas and "cudalens[cuda-libs]" in blas
    broken = next(ln for ln in failed if "broken.cu" in ln)
    assert broken.startswith("src/broken.cu:3:1: ") and "analysed source-only" in broken  # the error's line
    github = [ln for ln in outputs["github"][1].splitlines() if "compile-error" in ln]
    assert len(github) == 2 and all(ln.startswith("::warning file=src/") for ln in github)
    assert any("line=3" in ln and "broken.cu" in ln for ln in github)


def test_sarif_has_a_result_per_failed_file_with_its_rule(outputs):
    run = json.loads(outputs["sarif"][1])["runs"][0]
    results = [r for r in run["results"] if r["ruleId"] == "compile-error"]
    assert sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results) == \
        ["src/blas.cu", "src/broken.cu"]
    rules = run["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == "compile-error" for r in results)
    assert next(r for r in results if r["properties"]["missing"] == "cublas_v2.h")["properties"]["kind"] == \
        "library-header"


def test_json_and_text_carry_notes_the_fix_and_the_source_only_count(outputs):
    data = json.loads(outputs["json"][1])
    files = {Path(f["path"]).name: f for f in data["files"]}
    assert data["source_only"] == 2
    assert files["blas.cu"]["compile_failure"]["fix"].startswith("cuBLAS headers are not installed: pip install "
                                                                 "'cudalens[cuda-libs]'")
    assert files["broken.cu"]["compile_failure"]["line"] == 3
    # the quoted include no -I held: found in the repository, the folder named, the file compiled
    assert files["found.cu"]["compiled"] and files["found.cu"]["compile_failure"] is None
    assert any("helper.h found in " in n and f"{os.sep}Common, which no -I names" in n for n in files["found.cu"]["notes"])
    text = outputs["text"][1]
    assert "2 analysed source-only (not compiled)" in text.splitlines()[-1]
    assert "cudalens[cuda-libs]" in text


def test_strict_fails_on_files_analysed_source_only(outputs):
    assert outputs["concise"][0] == 0 and outputs["strict"][0] == 1


def test_missing_header_forms_and_library_headers():
    assert missing_header("helper_cuda.h: No such file or directory") == "helper_cuda.h"
    assert missing_header('catastrophic error: cannot open source file "sub/x.cuh"') == "sub/x.cuh"
    assert missing_header("expected an expression") is None
    for header, lib in (("cublas_v2.h", "cuBLAS"), ("cublasLt.h", "cuBLASLt"), ("cufft.h", "cuFFT"),
                        ("curand_kernel.h", "cuRAND"), ("cusparse.h", "cuSPARSE"), ("cusolverDn.h", "cuSOLVER")):
        found = library_of(header)
        assert found is not None and found[0] == lib
    assert library_of("helper.h") is None
    fix = diagnose("a.cu", "cufft.h: No such file or directory", "a.cu", 1).fix
    assert "cudalens[cuda-libs]" in fix and "nvidia-cufft" in fix


def test_repository_search_is_bounded_to_the_root_and_follows_no_link(tmp_path):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    unit = root / "src" / "a.cu"
    unit.write_text('#include "inc/x.h"\n')
    outside = tmp_path / "outside" / "inc"
    outside.mkdir(parents=True)
    (outside / "x.h").write_text("")
    (root / "link").symlink_to(tmp_path / "outside")  # a link out of the repository: never followed
    assert project_root(unit) == root
    assert find_in_repository("inc/x.h", unit) is None
    (root / "lib" / "inc").mkdir(parents=True)
    (root / "lib" / "inc" / "x.h").write_text("")
    assert find_in_repository("inc/x.h", unit) == str(root / "lib")  # the folder -I needs for "inc/x.h"
    assert find_in_repository("../x.h", unit) is None
    # nearest of two candidates to the including file
    (root / "src" / "inc").mkdir()
    (root / "src" / "inc" / "x.h").write_text("")
    assert find_in_repository("inc/x.h", unit) == str(root / "src")


def test_repository_search_stops_after_its_bound(tmp_path, monkeypatch):
    import cudalens.pipeline.compile_failure as cf

    (tmp_path / ".git").mkdir()
    for i in range(30):
        (tmp_path / f"d{i:02}").mkdir()
        (tmp_path / f"d{i:02}" / "f.txt").write_text("")
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / "x.h").write_text("")
    assert find_in_repository("x.h", tmp_path / "a.cu") == str(tmp_path / "zz")
    monkeypatch.setattr(cf, "MAX_FILES", 10)
    assert find_in_repository("x.h", tmp_path / "a.cu") is None
    assert MAX_FILES >= 10_000


def test_analyze_says_it_too_and_strict_fails(wheel_toolchain, tmp_path, capsys):
    src = _project(tmp_path)
    blas = str(src / "blas.cu")
    assert main(["analyze", blas, "--no-config", "--format", "github"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("::warning file=") and "cudalens[cuda-libs]" in out[0]
    assert main(["analyze", blas, "--no-config", "--strict", "--format", "concise"]) == 1
    assert " compile-error [source-only] " in capsys.readouterr().out
    assert main(["analyze", blas, "--no-config", "--no-compile", "--strict", "--format", "concise"]) == 0
    assert " compile-error " not in capsys.readouterr().out  # source-only by request is no failure


def test_html_lists_the_files_analysed_source_only():
    from cudalens.report.html import render_html

    failure = diagnose("src/blas.cu", "cublas_v2.h: No such file or directory", "src/blas.cu", 1)
    page = render_html({"findings": [], "kernels": [], "files": [{"path": "src/blas.cu",
                                                                  "compile_failure": failure.to_dict()}]})
    assert "1 file(s) analysed source-only" in page and "cudalens[cuda-libs]" in page
    assert "source-only" not in render_html({"findings": [], "kernels": [], "files": [{"path": "a.cu",
                                                                                       "compile_failure": None}]})
