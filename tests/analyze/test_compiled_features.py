"""The compiled access model reaching the user (#14): one compile, --instantiate, rules reading the
compiled figures where the source model has none, compiled trip counts in the ranking, and
--counters with Nsight Compute's per-instruction source page (the H100 fixture)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from _ncu_pages import csv_text
from _sources import line_of
from cudalens.cli import main
from cudalens.pipeline import analyze

HERE = Path(__file__).parent
FEATURES = HERE.parent / "access" / "ptx" / "features.cu"
SOURCE_PAGE = HERE.parent / "fixtures" / "ncu_source_h100_features.csv"

GEMM = """template <int BM, int BN, int BK>
__global__ void gemm(const float* A, const float* B, float* C, int n) {
    __shared__ float As[BM][BK];
    int t = threadIdx.x;
    for (int k = 0; k < BK; ++k) As[t % BM][k] = A[t * n + k];
    __syncthreads();
    C[blockIdx.x * BN + t] = As[t % BM][t % BK];
}
"""

TRANSPOSE = """__global__ void transpose_naive(float *out, const float *in, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) out[x * height + y] = in[y * width + x];
}
"""

ROWS = """template <int N>
__global__ void rows(float *a, const float *b) {
#pragma unroll 1
    for (int i = 0; i < N; ++i) {
        a[threadIdx.x * 64 + i] = b[threadIdx.x * 64 + i] * 2.0f;
    }
}
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    f = tmp_path / name
    f.write_text(text)
    return str(f)


def _preds(kernel: dict) -> dict[tuple[int, str], float | None]:
    return {(p["line"], p["quantity"]): p["value"] for e in kernel["compiled_access"] for p in e["predictions"]}


def test_instantiate_evaluates_the_named_template(nvcc_toolchain, tmp_path):
    f = _write(tmp_path, "gemm.cu", GEMM)
    plain = analyze([f]).to_dict()
    assert plain["kernels"][0]["access_layer"] == "source"  # never launched: nothing instantiated
    d = analyze([f], instantiate=("gemm<128,128,8>",)).to_dict()
    (k,) = d["kernels"]
    assert k["access_layer"] == "compiled-ptx"
    (inst,) = k["compiled_access"]
    assert inst["kernel"] == "_Z4gemmILi128ELi128ELi8EEvPKfS1_Pfi"
    p = _preds(k)
    # A[t * n + k]: lanes n floats apart, n tried at 256, 1000, 4096: a sector per lane
    assert p[(5, "global load sectors/request")] == 32.0
    # As[t % 128][k] on rows of BK = 8 floats: lanes 4 rows apart share a bank: 8-way
    assert p[(5, "shared store wavefronts/request")] == 8.0
    # As[t % 128][t % 8]: word 9t for t < 8, wrapping: 4-way
    assert p[(7, "shared load wavefronts/request")] == 4.0
    assert p[(7, "global store sectors/request")] == 4.0
    # and the rules read those figures (the source model had none for the template's tile)
    got = {(f["rule"], f["line"]) for f in d["findings"]}
    assert {("G3", 5), ("SH1", 5), ("SH1", 7)} <= got  # A[t * n + k]: lanes n apart in every trial


def test_instantiate_errors_name_the_argument(nvcc_toolchain, tmp_path, capsys):
    f = _write(tmp_path, "gemm.cu", GEMM)
    for spec, words in (("gemm<float>", "the compiler rejects it"), ("gemm<1;2>", "not a template kernel"),
                        ("nosuch<1>", "no analyzed file mentions 'nosuch'")):
        assert main(["analyze", f, "--instantiate", spec]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"--instantiate {spec!r}" in err[0] and words in err[0], err


def test_parameter_stride_fires_g3_from_the_compiled_figures(nvcc_toolchain, tmp_path):
    f = _write(tmp_path, "transpose.cu", TRANSPOSE)
    source_only = analyze([f], compile=False).to_dict()
    store = next(a for a in source_only["kernels"][0]["accesses"] if a["op"] == "store")
    assert store["sectors_per_request"] is None and store["pattern"] == "parameter-dependent"
    assert not [x for x in source_only["findings"] if x["rule"].startswith("G")]

    d = analyze([f]).to_dict()
    store = next(a for a in d["kernels"][0]["accesses"] if a["op"] == "store")
    assert store["figures_from"] == "compiled-ptx"
    assert (store["sectors_per_request"], store["ideal_sectors_per_request"]) == (32.0, 4.0)
    # out[x * height + y]: neighbouring lanes height floats apart, height tried at 256, 1000, 4096 and, as it
    # reaches the address, at the small sizes too (issue #26: a trial is never the stride printed; the
    # parameter is named with its trials; issue #27: small sizes are tried)
    from cudalens.access.ptx_eval import PLAUSIBLE, SMALL

    span = f"{min(PLAUSIBLE + SMALL)}..{max(PLAUSIBLE + SMALL)}"
    assert store["pattern"] == "strided-by-parameter" and store["lane_stride_text"] == \
        f"= height elements (height = {span} tried)"
    load = next(a for a in d["kernels"][0]["accesses"] if a["op"] == "load")
    assert load["figures_from"] == "source"  # the source model's figure is kept
    assert not [x for x in d["findings"] if x["rule"] == "G1"]  # a strided access is G3's, not G1's
    (g3,) = [x for x in d["findings"] if x["rule"] == "G3"]
    assert g3["line"] == 4 and f"lane stride = height elements (height = {span} tried): 32 sectors" in g3["message"]
    layers = {(e["layer"], e["fact"]) for e in g3["evidence"]}
    assert ("compiled", "sectors_per_request") in layers and ("compiled", "figures_from") in layers
    said = [e["value"] for e in g3["evidence"] if e["fact"] == "assumption"]
    from cudalens.access.ptx_eval import PLAUSIBLE, SMALL

    span = f"{min(PLAUSIBLE + SMALL)}..{max(PLAUSIBLE + SMALL)}"
    assert any(f"height = {span} tried) in the compiled code's parameter trials" in s for s in said), said


def test_compiled_trip_counts_weight_the_ranking(nvcc_toolchain, tmp_path):
    f = _write(tmp_path, "rows.cu", ROWS)
    assumed = analyze([f], compile=False).findings
    compiled = analyze([f], instantiate=("rows<5>",)).findings
    line5 = [x for x in compiled if x.line == 5]
    assert line5 and all(x.runs == 5.0 for x in line5)  # the loop ran 5 trips in the compiled code
    assert any(e.value == "loop at line 4: 5 trips (compiled code)" for x in line5 for e in x.evidence)
    assert all(x.runs == 16.0 for x in assumed if x.line == 5)  # source only: the assumed count


def test_one_nvcc_call_per_unit(nvcc_toolchain, tmp_path, monkeypatch):
    """The cubin facts and the compiled access model come from one nvcc run; a re-analysis none."""
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "cache"))
    f = _write(tmp_path, "transpose.cu", TRANSPOSE)
    calls: list[list[str]] = []
    real_run = subprocess.run

    def counting_run(cmd, *a, **kw):
        if isinstance(cmd, (list, tuple)) and cmd and Path(str(cmd[0])).name == "nvcc":
            calls.append(list(map(str, cmd)))
        return real_run(cmd, *a, **kw)

    monkeypatch.setattr(subprocess, "run", counting_run)
    d = analyze([f]).to_dict()
    assert d["kernels"][0]["access_layer"] == "compiled-ptx"
    assert len(calls) == 1 and "-cubin" in calls[0] and "--keep" in calls[0], calls
    assert not any("-ptx" in c for c in calls)
    calls.clear()
    again = analyze([f]).to_dict()
    assert calls == [] and again["kernels"][0]["compiled_access"] == d["kernels"][0]["compiled_access"]


def _line(text: str) -> int:
    return line_of(FEATURES, text)


def test_counters_source_page_checks_every_line(nvcc_toolchain, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["analyze", str(FEATURES), "--counters", str(SOURCE_PAGE), "--format", "json", "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    checks = {(c["kernel"], c["line"], c["quantity"]): c for c in d["line_checks"]}
    vec4 = checks[("_Z9vec4_copyPK6float4PS_", _line("out[i] = in[i];  // 16"), "global load sectors/request")]
    assert (vec4["predicted"], vec4["measured"], vec4["agree"], vec4["layer"]) == (16.0, 16.0, True, "compiled-ptx")
    tile = checks[("_Z20transpose_naive_tilePKfPfi", _line("out[y * n + x] = tile[threadIdx.x][threadIdx.y]"),
                   "shared load wavefronts/request")]
    assert (tile["predicted"], tile["measured"]) == (32.0, 32.0)
    s = d["line_checks_summary"]
    assert s["lines"] >= 20 and s["agree"] == s["lines"] and s["disagree"] == 0
    # every line a number but uniform_index's table[idx * C + c]: C nobody gave, and odd sizes (17, 33)
    # misalign it: the range 4..5 sectors, which holds the measured 4; and transpose_naive_tile's rows
    # y * n + x: with no launch, a 2-D kernel is evaluated under 32x8 threads (project.resolve.PLAUSIBLE_BLOCKS),
    # whose 8 rows are n apart, n nobody gave: 4..4.875 sectors at the odd sizes, holding the measured 4
    ranged = [c for c in d["line_checks"] if c["predicted"] is None]
    assert s["predicted"] == s["lines"] - 3 and sorted((c["low"], c["high"], c["agree"]) for c in ranged) == [
        (4.0, 4.875, True), (4.0, 4.875, True), (4.0, 5.0, True)]
    assert not [x for x in d["findings"] if x["rule"] == "V1"]


def test_counters_source_page_disagreement_is_a_v1_naming_the_line(nvcc_toolchain, tmp_path):
    """The same page with one line's sectors doubled: one V1 at that line, the others agree."""
    import csv
    import io

    line = _line("out[i] = in[i];  // 16")
    rows = list(csv.reader(io.StringIO(SOURCE_PAGE.read_text())))
    kernel = None
    header: list[str] = []
    changed = 0
    for r in rows:
        if r and r[0] == "Function Name":
            kernel = r[1]
        elif r and r[0] == "Line No":
            header = r
        elif kernel == "_Z9vec4_copyPK6float4PS_" and header and len(r) == len(header) and "LDG" in r[3]:
            col = header.index("L2 Theoretical Sectors Global")
            r[col] = str(float(r[col]) * 2)
            changed += 1
    assert changed >= 1  # the instruction (ncu may list it twice: the parser counts it once)
    page = tmp_path / "page.csv"
    page.write_text(csv_text(rows))
    out = tmp_path / "r.json"
    assert main(["analyze", str(FEATURES), "--counters", str(page), "--format", "json", "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    (v1,) = [x for x in d["findings"] if x["rule"] == "V1"]
    assert v1["line"] == line and v1["kernel"] == "vec4_copy"
    assert f"line {line}" in v1["message"] and "predicted 16" in v1["message"] and "measured 32" in v1["message"]
    assert d["line_checks_summary"]["disagree"] == 1


def _no_gpu(request, timeout_s):
    from cudalens.errors import NoDeviceError

    raise NoDeviceError("no GPU here")


def test_counters_run_checks_the_run_kernel_at_the_run_launch(nvcc_toolchain, tmp_path, monkeypatch, capsys):
    """--counters=run: the launch's source page (here the H100 page of the same kernel, launched as
    the fixture's plan says: 8 x 256) is checked against the model evaluated at the --run launch;
    the profiled build's file name (NVRTC's) is taken as the analyzed file."""
    from cudalens.profile import ncu

    page = SOURCE_PAGE.read_text().replace(str(FEATURES.resolve()), "vec4_copy.cu")
    monkeypatch.setattr(ncu, "profile_pages", lambda program, **kw: ncu.Pages("", page))  # no kernel-level counters
    monkeypatch.setattr("cudalens.measure.isolate.run_isolated", _no_gpu)
    out = tmp_path / "r.json"
    rc = main(["analyze", str(FEATURES), "--run", "vec4_copy --grid 8 --block 256 --arg float32[8192] "
               "--arg float32[8192]", "--counters=run", "--format", "json", "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    d = json.loads(out.read_text())
    got = {(c["line"], c["quantity"]): (c["predicted"], c["measured"], c["agree"]) for c in d["line_checks"]
           if c["kernel"] == "_Z9vec4_copyPK6float4PS_"}
    line = _line("out[i] = in[i];  // 16")
    assert got[(line, "global load sectors/request")] == (16.0, 16.0, True)
    assert got[(line, "global store sectors/request")] == (16.0, 16.0, True)


def test_source_page_launch_names_the_analyzed_file(tmp_path):
    from cudalens.pipeline.measured import launch_source

    f = tmp_path / "k.cu"
    f.write_text(TRANSPOSE)
    req = {"source": TRANSPOSE, "origin": str(f)}
    assert launch_source(req) == TRANSPOSE  # a plain measured launch: unchanged
    assert launch_source({**req, "lineinfo": True}) == f'#line 1 "{f}"\n' + TRANSPOSE
    odd = tmp_path / 'q"uote.cu'
    odd.write_text(TRANSPOSE)
    assert launch_source({"source": TRANSPOSE, "origin": str(odd), "lineinfo": True}) == TRANSPOSE


def test_source_page_is_told_from_a_raw_page():
    from cudalens.pipeline.line_checks import is_source_page

    assert is_source_page(SOURCE_PAGE.read_text())
    assert not is_source_page((HERE.parent / "fixtures" / "ncu_h100_raw.csv").read_text())


def test_check_instantiates_in_the_files_that_name_the_template(nvcc_toolchain, tmp_path, capsys):
    _write(tmp_path, "gemm.cu", GEMM)
    _write(tmp_path, "transpose.cu", TRANSPOSE)
    rc = main(["check", str(tmp_path), "--instantiate", "gemm<128,128,8>", "--format", "concise", "-j", "1"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert any("gemm.cu:5:" in ln and "G3" in ln for ln in out.splitlines()), out
    assert any("transpose.cu:4:" in ln and "G3" in ln for ln in out.splitlines()), out


TWO = """template <int ST>
__global__ void two(float *o) {
    __shared__ float s[4096];
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    o[threadIdx.x] = s[threadIdx.x * ST] + s[threadIdx.x * ST + 1];
}
"""


def test_a_lines_compiled_figure_goes_to_one_access(nvcc_toolchain, tmp_path):
    """Two shared loads on one line, no source figure: the line's compiled figure (the compiler
    merged the pair into one 8-byte load per lane, 2 wavefronts where 2 are ideal: ratio 1)
    fills the first, not each."""
    d = analyze([_write(tmp_path, "two.cu", TWO)], instantiate=("two<2>",)).to_dict()
    loads = [a for a in d["kernels"][0]["accesses"] if a["space"] == "shared" and a["op"] == "load"]
    assert [(a["figures_from"], a["bank_conflict_ways"]) for a in loads] == [("compiled-ptx", 1.0), ("source", None)]
