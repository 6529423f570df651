"""The public Python API (``import cudalens``): typed, frozen results, the same documents the
commands print (the CLI is a layer over these functions), and the GPU functions' behaviour on a
machine without one."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import cudalens
from cudalens.cli import main
from cudalens.findings import Finding
from cudalens.hardware.target import device_cc

ROOT = Path(__file__).resolve().parents[2]
NO_GPU = device_cc() is None
STRIDED = """__global__ void strided(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i * 32] = 2.0f * x[i * 32];
}
"""


@pytest.fixture()
def kernel(tmp_path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no [tool.cudalens] above it
    path = tmp_path / "k.cu"
    path.write_text(STRIDED)
    return path


def _cli_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    main(list(argv))
    return json.loads(capsys.readouterr().out)


def test_analyze_returns_a_frozen_report_with_findings(kernel):
    report = cudalens.analyze(kernel, compile=False)
    assert isinstance(report, cudalens.Report)
    assert report.findings and all(isinstance(f, Finding) for f in report.findings)
    g3 = [f for f in report.findings if f.rule == "G3"]
    assert {f.line for f in g3} == {3} and len(g3) == 1  # the store and the load of line 3: one finding per line
    assert report.at_or_above("high") == g3
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.suppressed = {}  # type: ignore[misc]
    doc = report.to_dict()
    assert doc["schema"] == "cudalens/analysis-1" and [f["rule"] for f in doc["findings"]].count("G3") == 1
    page = report._repr_html_()
    assert page.lstrip().lower().startswith("<!doctype html") and "G3" in page
    assert "1 high" in repr(report) and "1 file(s)" in repr(report)


def test_the_cli_prints_the_api_documents(kernel, capsys):
    """analyze and check are a layer over the API: their JSON is the API's to_dict()."""
    folder = str(kernel.parent)
    assert _cli_json(capsys, "check", folder, "--no-compile", "--format", "json") == \
        json.loads(json.dumps(cudalens.check(folder, compile=False).to_dict(), default=str))
    assert _cli_json(capsys, "analyze", str(kernel), "--no-compile", "--format", "json") == \
        json.loads(json.dumps(cudalens.analyze(kernel, compile=False).to_dict(), default=str))


def test_check_finds_files_goes_past_broken_ones_and_triages(kernel):
    (kernel.parent / "sub").mkdir()
    (kernel.parent / "sub" / "bad.cu").write_bytes(b"\x00\x01\x02 not C at all \xff" * 20)
    report = cudalens.check([kernel.parent], compile=False)
    assert [Path(fa.model.path).name for fa in report.files] == ["k.cu"]
    assert [Path(p).name for p, _ in report.failed] == ["bad.cu"]
    quiet = cudalens.check(kernel.parent, compile=False, exclude=["sub"], ignore=["G"])
    assert not quiet.failed and not [f for f in quiet.findings if f.rule.startswith("G")]
    assert quiet.suppressed["ignored"] == 1  # the store and the load of line 3 are one G3 finding
    with pytest.raises(cudalens.InputError, match="check\\(\\) takes no run="):
        cudalens.check(kernel.parent, run=object())


def test_warnings_for_unknown_config_keys_and_suppression_codes(kernel, capsys):
    (kernel.parent / "pyproject.toml").write_text('[tool.cudalens]\nselekt = ["G"]\nignore = ["I17"]\n')
    lines = STRIDED.splitlines()
    lines[1] += "  // cudalens: ignore[SH1]"  # no SH1 finding here: unused
    lines[2] += "  // cudalens: ignore[G3, G99]"  # G3 used; G99 names no rule
    kernel.write_text("\n".join(lines) + "\n")
    report = cudalens.analyze(kernel, compile=False)
    assert report.suppressed == {"ignored": 1, "comment": 1}
    assert len(report.warnings) == 3
    assert "unknown key 'selekt'" in report.warnings[0]
    assert ":2: unused suppression comment 'cudalens: ignore[SH1]'" in report.warnings[1]
    assert ":3: unknown rule 'G99'" in report.warnings[2]
    capsys.readouterr()
    assert main(["check", str(kernel), "--no-compile"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [e for e in err if e.startswith("cudalens: warning: ")] == [f"cudalens: warning: {w}" for w in report.warnings]
    main(["bench", str(kernel), "--kernel", "strided", "--grid", "1", "--block", "32", "--no-save"])
    assert f"cudalens: warning: {report.warnings[0]}" in capsys.readouterr().err.splitlines()


def test_cc_is_resolved_one_way(kernel):
    from cudalens.hardware.target import resolve_target

    assert resolve_target(None, None, probe=lambda: None) == resolve_target(None, None, probe=lambda: "99.9")
    assert resolve_target(None, None, probe=lambda: None).cc == "9.0"
    assert resolve_target(None, None, probe=lambda: "8.0").origin == "device"
    assert resolve_target(None, "8.6", probe=lambda: "8.0").cc == "8.6"
    assert resolve_target("sm_75", "8.6", probe=lambda: "8.0").cc == "7.5"
    (kernel.parent / "pyproject.toml").write_text('[tool.cudalens]\ncc = "8.0"\n')
    report = cudalens.analyze(kernel, compile=False)
    assert (report.cc, report.target) == ("8.0", "config")
    assert cudalens.analyze(kernel, compile=False, cc="8.6").cc == "8.6"
    assert cudalens.analyze(kernel, compile=False, use_config=False).target in ("device", "default")


def test_occupancy(capsys):
    occ = cudalens.occupancy(256, 37, cc="9.0", shared_mem=16384)
    assert isinstance(occ, cudalens.Occupancy)
    # 37 registers round to 40 per thread: 256 x 40 = 10240 per block, 6 blocks in 65536; shared: 13 blocks
    assert occ.result.active_blocks_per_sm == 6 and occ.occupancy == pytest.approx(6 * 8 / 64)
    assert occ.limiters == ("registers",)
    cli = _cli_json(capsys, "occupancy", "--cc", "9.0", "--threads", "256", "--registers", "37",
                    "--shared-mem", "16384", "--format", "json")
    assert cli == {**occ.to_dict(), "plot": None}
    assert "occupancy" in occ._repr_html_() and "75.0%" in occ._repr_html_()
    with pytest.raises(cudalens.InputError, match="--threads 2048: more than the 1024"):
        cudalens.occupancy(2048, 32, cc="9.0")


def test_bench_checks_its_launch_then_needs_a_gpu():
    saxpy = str(ROOT / "examples" / "saxpy.cu")
    with pytest.raises(cudalens.InputError, match="--arg"):
        cudalens.bench(saxpy, "saxpy", grid=64, block=256, args=["float33[16]"])
    if not NO_GPU:
        pytest.skip("a GPU is present: the gpu-marked test measures")
    with pytest.raises(cudalens.NoDeviceError) as exc:
        cudalens.bench(saxpy, "saxpy", grid=64, block=256,
                       args=["int32=16384", "float32=2", "float32[16384]", "float32[16384]@inout"])
    assert "needs a GPU" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.gpu
def test_bench_measures_on_a_gpu():
    if NO_GPU:
        pytest.skip("no GPU")
    r = cudalens.bench(str(ROOT / "examples" / "saxpy.cu"), "saxpy", grid=64, block=256,
                       args=["int32=16384", "float32=2", "float32[16384]", "float32[16384]@inout"], max_time=0.2)
    assert r.median_s > 0 and r.to_dict()["kernel"] == "saxpy" and "median" in r._repr_html_()


def test_profile_of_a_saved_trace_needs_no_gpu(capsys):
    trace = str(ROOT / "tests" / "fixtures" / "profile" / "h100_transpose.tsv")
    prof = cudalens.profile(["./transpose"], trace=trace, cc="9.0")
    doc = prof.to_dict()
    names = [k["name"] for k in doc["kernels"]]
    assert "transposeNaive" == names[0] and "transposeNoBankConflicts" in names
    assert "transposeNaive" in prof._repr_html_()
    assert _cli_json(capsys, "profile", "--trace", trace, "--cc", "9.0", "--format", "json", "--", "./transpose") == \
        json.loads(json.dumps(doc))


def test_tune_with_the_fake_runner(tmp_path):
    src = tmp_path / "gemm.cu"
    src.write_text("template <int BM, int BN, int BK, int TM, int TN>\n__global__ void gemm(float* c) {}\n")
    t = cudalens.tune(str(src), "gemm<BM,BN,BK,TM,TN>", ["BM=64,128", "BN=128", "BK=8:16:x2", "TM=8", "TN=8"],
                      const={"M": 1024, "N": 1024}, grid="cdiv(N, BN), M/BM", block="(BM/TM)*(BN/TN)", fake={},
                      strategy="exhaustive", db=str(tmp_path / "h.db"))
    assert isinstance(t, cudalens.Tune) and t.to_dict()["configurations"] == 4
    assert t.best is not None and t.best["config"].startswith("BM=")
    assert t.best["config"] in t._repr_html_()


def test_api_names_shared_with_packages_stay_callable():
    """``cudalens.occupancy``, ``.profile`` and ``.tune`` are also sub-packages; importing one binds
    the package in the function's place, and the package is callable as the function."""
    import importlib

    for name in ("occupancy", "profile", "tune"):
        module = importlib.import_module(f"cudalens.{name}")
        assert getattr(cudalens, name) is module and callable(module)
    assert cudalens.occupancy(128, 64, cc="8.0").to_dict() == cudalens.api.occupancy(128, 64, cc="8.0").to_dict()
    with pytest.raises(cudalens.InputError, match="no command given"):
        cudalens.profile()
    from cudalens.tune import make_space  # the package's own names are untouched

    assert make_space(["A=1:4:+1"]).full_size == 4


def test_tune_reads_bench_placeholders_as_its_parameter_names(tmp_path):
    src = tmp_path / "gemm.cu"
    src.write_text("template <int BM, int BN, int BK, int TM, int TN>\n__global__ void gemm(float* c) {}\n")
    common = dict(const={"M": 1024, "N": 1024}, fake={}, strategy="exhaustive")
    space = ["BM=64,128", "BN=128", "BK=8", "TM=8", "TN=8"]
    plain = cudalens.tune(str(src), "gemm<BM,BN,BK,TM,TN>", space, grid="N/BN, M/BM", block="(BM/TM)*(BN/TN)",
                          db=str(tmp_path / "a.db"), **common)
    braced = cudalens.tune(str(src), "gemm<{BM},{BN},{BK},{TM},{TN}>", space, grid="{N}/{BN}, {M}/{BM}",
                           block="({BM}/{TM})*({BN}/{TN})", db=str(tmp_path / "b.db"), **common)
    keys = ("configurations", "measured", "pruned")
    assert [plain.to_dict()[k] for k in keys] == [braced.to_dict()[k] for k in keys] == [2, 2, 0]
