"""Issue #30 items 1-3: estimated speedup, quiet default output, and the fix that fits; each false
alarm beside a true positive that still fires."""

from __future__ import annotations

import json
import textwrap

import pytest

from cudalens.cli import main
from cudalens.findings import Finding, Priority, SpeedupEstimate, sort_findings
from cudalens.pipeline import analyze_file


def _analyze(tmp_path, code: str, name: str = "k.cu"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(code))
    return analyze_file(str(p), compile=False)


def _rules(fa, rule: str, kernel: str | None = None) -> list[Finding]:
    return [f for f in fa.findings if f.rule == rule and (kernel is None or f.kernel == kernel)]


# ----------------------------------------------------------------------------- 1. estimated speedup

def _finding(rule, priority, speedup):
    est = None if speedup is None else SpeedupEstimate(speedup, speedup, 1.0, "memory", "memory")
    return Finding(rule, priority, "s", "k", "f.cu", 1, "m", "fix", speedup=est)


def test_rank_is_by_estimated_speedup_and_priority_breaks_ties():
    fs = [_finding("G2", Priority.HIGH, 0.01), _finding("SH1", Priority.MEDIUM, 0.40),
          _finding("I8", Priority.MEDIUM, None), _finding("X1", Priority.HIGH, None),
          _finding("G3", Priority.HIGH, 0.40)]
    assert [f.rule for f in sort_findings(fs)] == ["G3", "SH1", "G2", "X1", "I8"]


STRIDED_IN_LOOP = """\
#define K 1024
__global__ void mixed(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += a[i * K + k];
    out[i + 1] = acc;
}
void go(const float *a, float *o, int n) { mixed<<<n / 256, 256>>>(a, o, n); }
"""


def test_a_strided_load_in_a_loop_outranks_a_misaligned_store_and_json_has_the_inputs(tmp_path):
    fa = _analyze(tmp_path, STRIDED_IN_LOOP)
    ranked = [f for f in fa.findings if f.speedup is not None]
    assert ranked[0].line == 5 and ranked[0].speedup.bound == "memory"
    store = next(f for f in ranked if f.line == 6)
    assert ranked[0].estimated_speedup > 10 * store.estimated_speedup
    d = ranked[0].to_dict()
    assert d["estimated_speedup"] == ranked[0].speedup.speedup
    assert set(d["speedup"]["kernel_cycles_per_warp"]) == {"memory", "shared", "compute"}
    assert d["speedup"]["source"] == "static" and d["speedup"]["saved_cycles_per_warp"] > 0


def test_launch_weight_moves_a_kernel_up(tmp_path):
    code = """\
    __global__ void a(float *x) { int i = threadIdx.x; x[2 * i] = 1.0f; }
    __global__ void b(float *x) { int i = threadIdx.x; x[2 * i] = 1.0f; }
    void go(float *x, int n) {
        a<<<64, 256>>>(x);
        for (int s = 0; s < n; ++s) b<<<64, 256>>>(x);
    }
    """
    fa = _analyze(tmp_path, code)
    (fa_, ) = _rules(fa, "G3", "a")
    (fb, ) = _rules(fa, "G3", "b")
    assert fb.speedup.launches > fa_.speedup.launches
    assert fb.estimated_speedup > fa_.estimated_speedup
    assert fa.findings.index(fb) < fa.findings.index(fa_)


def test_measured_time_share_replaces_the_estimated_one():
    from cudalens.guided.rank import KernelLoad, rank_findings

    fs = [_finding("G3", Priority.HIGH, 0.5), dataclass_replace(_finding("SH1", Priority.MEDIUM, 0.3), kernel="q")]
    loads = {"k": KernelLoad("k", 1.0, 0.1, None, None, None, None, None),
             "q": KernelLoad("q", 9.0, 0.9, None, None, None, None, None)}
    ranked = rank_findings(fs, loads)
    assert [f.rule for f in ranked] == ["SH1", "G3"]
    assert ranked[0].speedup.source == "measured" and ranked[0].speedup.kernel_share == 0.9


def dataclass_replace(f, **kw):
    import dataclasses

    return dataclasses.replace(f, **kw)


# ----------------------------------------------------------------------------- 2. quiet by default

HYGIENE = """\
__global__ void k0(float *x) { x[threadIdx.x] = 0.0f; }
__global__ void k1(float *x) { x[2 * threadIdx.x] = 0.0f; }
void go(float *x) {
    k0<<<1, 256>>>(x);
    k0<<<1, 256>>>(x);
    k0<<<1, 256>>>(x);
    k1<<<1, 256>>>(x);
}
"""


def test_default_check_collapses_info_hygiene_and_show_all_lists_it(tmp_path, capsys):
    p = tmp_path / "h.cu"
    p.write_text(HYGIENE)
    main(["check", "--no-compile", str(p)])
    quiet = capsys.readouterr().out
    assert "Y1: 4 CUDA calls or launches without an error check; --show-all lists them" in quiet
    assert "G3" in quiet and "launch of `k0`" not in quiet
    main(["check", "--no-compile", "--show-all", str(p)])
    loud = capsys.readouterr().out
    assert loud.count("launch of `k") == 4


def test_min_priority_option_and_config_and_statistics(tmp_path, capsys):
    p = tmp_path / "h.cu"
    p.write_text(HYGIENE)
    main(["check", "--no-compile", "--min-priority", "high", "--format", "json", str(p)])
    data = json.loads(capsys.readouterr().out)
    assert {f["rule"] for f in data["findings"]} == {"G3"} and data["suppressed"]["min-priority"] >= 4
    (tmp_path / "cudalens.toml").write_text('min-priority = "high"\n')
    main(["check", "--no-compile", "--format", "concise", str(p)])
    assert [ln.split()[1] for ln in capsys.readouterr().out.splitlines()] == ["G3"]
    (tmp_path / "cudalens.toml").write_text('min-priority = "urgent"\n')
    assert main(["check", "--no-compile", str(p)]) == 2
    (tmp_path / "cudalens.toml").unlink()
    main(["check", "--no-compile", "--statistics", str(p)])
    stats = capsys.readouterr().out.splitlines()
    counts = [s.split()[:2] for s in stats]
    assert ["4", "Y1"] in counts and ["1", "G3"] in counts
    assert [int(c[0]) for c in counts] == sorted((int(c[0]) for c in counts), reverse=True)


def test_one_finding_per_rule_kernel_line_under_the_demangled_name():
    from cudalens.compiled.names import readable_kernel
    from cudalens.triage import collapse_instantiations

    assert readable_kernel("_Z7reduce0IfEvPT_S1_j") == "reduce0<float>"
    assert readable_kernel("_Z7reduce6IfLj256ELb0EEvPT_S1_jj") == "reduce6<float, 256, false>"
    base = Finding("SH1", Priority.MEDIUM, "s", "_Z7reduce0IfEvPT_S1_j", "r.cu", 9, "m", "fix")
    fs = [base, dataclass_replace(base, kernel="_Z7reduce0IdEvPT_S1_j"), dataclass_replace(base, kernel="reduce0"),
          dataclass_replace(base, line=10)]
    out = collapse_instantiations(fs)
    assert [(f.kernel, f.line) for f in out] == [("reduce0<float>", 9), ("reduce0<float>", 10)]
    assert any(e.fact == "other_instantiations" and e.value == 2 for e in out[0].evidence)


def test_y1_wrapper_recognised_by_what_it_does_beside_an_unchecked_call(tmp_path):
    code = """\
    void setup(float *d) {
        cudaCheck(cudaMalloc(&d, 64));
        cudaMemset(d, 0, 64);
    }
    """
    fa = _analyze(tmp_path, code)
    assert [f.message for f in _rules(fa, "Y1")] == ["the error code returned by `cudaMemset` is ignored"]


def test_y1_launch_checked_by_its_caller_in_another_file(tmp_path):
    (tmp_path / "check.h").write_text(
        "#define CHECK_LAUNCH(msg) report_last(msg, __LINE__)\n"
        "inline void report_last(const char *m, int l) { if (cudaGetLastError() != cudaSuccess) exit(1); }\n")
    (tmp_path / "main.cpp").write_text(
        "#include \"check.h\"\nvoid reduce(float *d, int n);\nvoid other(float *d);\n"
        "int main() { float *d = 0; reduce(d, 4); printf(\"launched\"); CHECK_LAUNCH(\"reduce\");\n"
        "  other(d); printf(\"x\"); }\n")
    code = """\
    __global__ void k(float *d, int n) { if (threadIdx.x < n) d[threadIdx.x] = 0; }
    void reduce(float *d, int n) { k<<<1, 128>>>(d, n); }
    void other(float *d) { k<<<1, 128>>>(d, 4); }
    """
    fa = _analyze(tmp_path, code, "red.cu")
    # reduce()'s caller checks later through a header's macro around a function reading the error
    # state; other()'s caller only prints
    assert [f.line for f in _rules(fa, "Y1")] == [3]


def test_d1_single_lane_write_is_quiet_and_single_lane_loop_is_costed(tmp_path):
    code = """\
    __global__ void warp_sums(const float *in, float *out) {
        float sum = in[blockIdx.x * blockDim.x + threadIdx.x];
        for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffff, sum, o);
        int laneId = threadIdx.x % 32;
        if (laneId == 0) out[blockIdx.x * 8 + threadIdx.x / 32] = sum;
    }
    __global__ void serial_total(const float *in, float *out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i == 0) {
            float t = 0.0f;
            for (int j = 0; j < n; ++j) t += in[j];
            out[0] = t;
        }
    }
    __global__ void split(float *x) { if (threadIdx.x % 2 == 0) x[threadIdx.x] = 1.0f; else x[threadIdx.x] = 2.0f; }
    void go(const float *a, float *b, int n) {
        warp_sums<<<64, 256>>>(a, b); serial_total<<<64, 256>>>(a, b, n); split<<<64, 256>>>(b);
    }
    """
    fa = _analyze(tmp_path, code)
    assert _rules(fa, "D1", "warp_sums") == []
    (serial,) = _rules(fa, "D1", "serial_total")
    assert serial.priority is Priority.HIGH and serial.runs and serial.runs > 1
    assert serial.speedup is not None and serial.speedup.resource == "kernel" and serial.speedup.kernel_speedup > 0.9
    assert [f.priority for f in _rules(fa, "D1", "split")] == [Priority.HIGH]


def test_i4_macro_double_constant_beside_a_literal_and_an_integer_macro(tmp_path):
    code = """\
    #define ETA 0.3
    #define STEPS 4
    __global__ void sgd(float *w, const float *g, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) w[i] -= ETA * g[i];
        if (i < n) w[i] *= 0.5;
        if (i < n) w[i] += STEPS * g[i];
    }
    """
    fa = _analyze(tmp_path, code)
    assert [f.line for f in _rules(fa, "I4")] == [5, 6]
    assert "#define ETA 0.3" in _rules(fa, "I4")[0].message


# ----------------------------------------------------------------------------- 3. the fix that fits

MODULO_TREE = """\
__global__ void reduce0(const float *in, float *out) {
    __shared__ float s[256];
    unsigned int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned int step = 1; step < 256; step *= 2) {
        if (tid % (2 * step) == 0) s[tid] += s[tid + step];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
void go(const float *a, float *b) { reduce0<<<64, 256>>>(a, b); }
"""


def test_interleaved_reduction_gets_sequential_addressing_and_a_tile_gets_padding(tmp_path):
    code = """\
    #define BLOCK 256
    __global__ void reduce1(const float *in, float *out) {
        __shared__ float s[BLOCK];
        int tid = threadIdx.x;
        s[tid] = in[blockIdx.x * BLOCK + tid];
        __syncthreads();
        for (int step = 1; step < BLOCK; step *= 2) {
            int index = 2 * step * tid;
            if (index < BLOCK) s[index] += s[index + step];
            __syncthreads();
        }
        if (tid == 0) out[blockIdx.x] = s[0];
    }
    __global__ void transpose(const float *in, float *out, int n) {
        __shared__ float t[32][32];
        t[threadIdx.y][threadIdx.x] = in[(blockIdx.y * 32 + threadIdx.y) * n + blockIdx.x * 32 + threadIdx.x];
        __syncthreads();
        out[(blockIdx.x * 32 + threadIdx.y) * n + blockIdx.y * 32 + threadIdx.x] = t[threadIdx.x][threadIdx.y];
    }
    void go(const float *a, float *b) { reduce1<<<64, BLOCK>>>(a, b); transpose<<<dim3(8, 8), dim3(32, 32)>>>(a, b, 256); }
    """
    fa = _analyze(tmp_path, code)
    red = _rules(fa, "SH1", "reduce1")
    assert red and all("sequential addressing" in f.fix and "[32][33]" not in f.fix for f in red)
    (mod,) = [f for f in _analyze(tmp_path, MODULO_TREE, "m.cu").findings if f.rule == "D1"]
    assert "sequential addressing" in mod.fix
    tile = _rules(fa, "SH1", "transpose")
    assert tile and all("[32][33]" in f.fix for f in tile)


def test_array_of_structs_is_one_finding_with_soa_beside_a_scattered_g1(tmp_path):
    code = """\
    struct Body { float x, y, z, vx, vy, vz; };
    __global__ void step(Body *b, float dt, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        b[i].x += b[i].vx * dt;
        b[i].y += b[i].vy * dt;
        b[i].z += b[i].vz * dt;
    }
    void go(Body *b, int n) { step<<<(n + 255) / 256, 256>>>(b, 0.1f, n); }
    """
    fa = analyze_file(str(_write(tmp_path, code)), compile=True)
    if fa.compiled is None:
        pytest.skip("no nvcc: the AoS figures come from the compiled access model")
    (g1,) = _rules(fa, "G1", "step")
    assert "structure of arrays" in g1.fix and "fastest-varying" not in g1.fix
    assert "lines 5, 6, 7" in g1.message


def _write(tmp_path, code):
    p = tmp_path / "aos.cu"
    p.write_text(textwrap.dedent(code))
    return p


def test_swapped_mapping_gets_swap_and_a_transpose_keeps_the_tile(tmp_path):
    code = """\
    __global__ void sgemm_naive(int N, const float *A, const float *B, float *C) {
        const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
        float acc = 0.0f;
        for (int i = 0; i < N; ++i) acc += A[x * N + i] * B[i * N + y];
        C[x * N + y] = acc;
    }
    __global__ void transpose_naive(const float *in, float *out, int n) {
        int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        out[x * n + y] = in[y * n + x];
    }
    void go(const float *a, const float *b, float *c) {
        sgemm_naive<<<dim3(64, 64), dim3(32, 32)>>>(2048, a, b, c);
        transpose_naive<<<dim3(64, 64), dim3(32, 32)>>>(a, c, 2048);
    }
    """
    fa = _analyze(tmp_path, code)
    swap = [f for f in fa.findings if f.kernel == "sgemm_naive" and f.rule in ("G3", "SH3")]
    assert swap and all(f.fix.startswith("swap the mapping") for f in swap)
    tr = [f for f in fa.findings if f.kernel == "transpose_naive" and f.rule in ("G3", "SH3")]
    assert tr and not any("swap the mapping" in f.fix for f in tr)


def test_read_out_copies_in_a_launch_loop_are_low_and_a_shuttle_stays_high(tmp_path):
    code = """\
    __global__ void k(float *d, int n) { int i = threadIdx.x; if (i < n) d[i] *= 2.0f; }
    void bench(float *h_out, float *d, float *h_in, int n) {
        for (int it = 0; it < 10; ++it) {
            k<<<1, 256>>>(d, n);
            cudaMemcpy(h_out, d, n * sizeof(float), cudaMemcpyDeviceToHost);
        }
        for (int it = 0; it < 10; ++it) {
            cudaMemcpy(d, h_in, n * sizeof(float), cudaMemcpyHostToDevice);
            k<<<1, 256>>>(d, n);
            cudaMemcpy(h_in, d, n * sizeof(float), cudaMemcpyDeviceToHost);
        }
    }
    """
    fa = _analyze(tmp_path, code)
    assert {(f.line, f.priority) for f in _rules(fa, "X1")} == {
        (5, Priority.LOW), (8, Priority.HIGH), (10, Priority.HIGH)}


def test_a_kernel_finding_reached_again_from_another_file_is_listed_once():
    import dataclasses as dc

    from cudalens.pipeline.analysis import Analysis, FileAnalysis
    from cudalens.source.model import Kernel, SourceModel
    from cudalens.triage import triage_analysis

    k = Kernel("apply", "main.cu", 2, 5, (), False, None)
    main_cu = SourceModel("main.cu", "", (k,), (), {}, (), ())
    header = SourceModel("util.cuh", "", (), (), {}, (), ())
    i6 = Finding("I6", Priority.MEDIUM, "s", "apply", "main.cu", 2, "m", "fix")
    a = Analysis((FileAnalysis(main_cu, None, (i6,)),
                  FileAnalysis(header, None, (dc.replace(i6, file="util.cuh", line=1),
                                              dc.replace(i6, rule="I16", file="util.cuh", line=1)))))
    out, triaged = triage_analysis(a)
    assert [f.rule for f in out.files[0].findings] == ["I6"]
    assert [f.rule for f in out.files[1].findings] == ["I16"]  # only here: kept
    assert triaged.suppressed == {"duplicate": 1}


#: every thread reads the whole array (its scan is line 6)
RANK_SCAN = """\
__global__ void rank_scan(const float *x, int *rank, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    int c = 0;
    for (int j = 0; j < n; ++j) c += x[j] < v;
    rank[i] = c;
}
"""


def test_every_thread_scanning_the_whole_array_is_sh2_and_a_gemv_is_not(tmp_path):
    code = RANK_SCAN + """\
__global__ void gemv_col(const float *A, const float *x, float *y, int M, int N) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    float acc = 0.0f;
    for (int k = 0; k < N; ++k) acc += A[k * M + row] * x[k];
    y[row] = acc;
}
void go(const float *x, int *r, float *y, int n) {
    rank_scan<<<(n + 255) / 256, 256>>>(x, r, n);
    gemv_col<<<(n + 255) / 256, 256>>>(x, x, y, n, n);
}
"""
    fa = _analyze(tmp_path, code)
    (scan,) = _rules(fa, "SH2", "rank_scan")
    assert scan.line == 6 and "`j < n`" in scan.message and scan.runs and scan.runs > 1
    assert scan.speedup is not None and scan.speedup.kernel_speedup > 0.3
    assert _rules(fa, "SH2", "gemv_col") == []


def test_the_estimate_survives_the_report_dict_round_trip():
    from cudalens.guided.inputs import finding_from_dict, finding_to_dict

    f = _finding("G3", Priority.HIGH, 0.25)
    back = finding_from_dict(finding_to_dict(f))
    assert back.speedup == f.speedup and finding_to_dict(f)["estimated_speedup"] == 0.25


def test_a_loop_bound_by_a_parameter_the_launch_passes_runs_that_many_times(tmp_path):
    code = """\
    __global__ void rows(const float *x, float *y, int R, int C) {
        int r = blockIdx.x * blockDim.x + threadIdx.x;
        if (r >= R) return;
        float s = 0.0f;
        for (int c = 0; c < C; ++c) s += x[r * C + c];
        y[r] = s;
    }
    void go(const float *x, float *y, int n) { rows<<<16, 256>>>(x, y, 4096, 768); }
    """
    fa = _analyze(tmp_path, code)
    strided = [f for f in fa.findings if f.kernel == "rows" and f.line == 5 and f.rule in ("G3", "SH3")]
    assert strided and strided[0].runs == 768


SCAN_AND_SHIFT = RANK_SCAN + """\
__global__ void shifted(const float *a, float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i + 1];
}
int main(int argc, char **argv) {
    int n = N_FROM_MAIN;
    float *x, *y; int *r;
    cudaMalloc(&x, n * sizeof(float)); cudaMalloc(&y, n * sizeof(float)); cudaMalloc(&r, n * sizeof(int));
    rank_scan<<<(n + 255) / 256, 256>>>(x, r, n);
    shifted<<<(n + 255) / 256, 256>>>(x, y, n);
    return 0;
}
"""


@pytest.mark.parametrize("n_from_main", ["100000", "atoi(argv[1])"])
def test_a_scan_of_the_whole_array_is_costed_by_the_launch_value_or_says_its_range(tmp_path, n_from_main):
    fa = _analyze(tmp_path, SCAN_AND_SHIFT.replace("N_FROM_MAIN", n_from_main))
    (g2,) = _rules(fa, "G2", "shifted")
    assert g2.impact == pytest.approx(0.2)  # 5 sectors against 4: 25 % more bytes than needed
    first = fa.findings[0]
    assert (first.rule, first.kernel, first.line) == ("SH2", "rank_scan", 6)
    assert first.estimated_speedup > 100 * g2.estimated_speedup and first.speedup.kernel_speedup > 0.5
    (reread,) = [e.value for e in first.evidence if e.fact == "whole_array_reread"]
    if n_from_main == "100000":
        assert first.runs == 100000 and reread["basis"] == "launch" and "100000 trips (launch: n = 100000)" in first.message
    else:  # n unknown: the range, its condition, and the value it ranks at, all said
        assert (reread["basis"], reread["lo"], reread["hi"]) == ("trial range", 256.0, 4096.0)
        assert first.runs == 1024 and "256..4096 trips" in first.message
        assert "n not known from any launch" in first.message and "geometric middle" in first.message
    assert "16 trips" not in first.message


def test_y1_reads_the_folders_sources_only_for_a_launch_its_function_leaves_unchecked(tmp_path, monkeypatch):
    import cudalens.source.callers as callers

    read: list[str] = []
    real = callers.caller_facts
    monkeypatch.setattr(callers, "caller_facts", lambda path, *a, **k: read.append(path) or real(path, *a, **k))
    (tmp_path / "main.cpp").write_text("void run(float *d);\nint main() { run(0); }\n")
    checked = """\
    __global__ void k(float *d) { d[threadIdx.x] = 0; }
    void run(float *d) { k<<<1, 32>>>(d); cudaGetLastError(); }
    """
    fa = _analyze(tmp_path, checked, "ok.cu")
    assert _rules(fa, "Y1") == [] and read == []  # every launch checked where it is made: nothing read
    for i in range(5):  # more sources to read than the syntax index keeps trees: the file's own is rebuilt
        (tmp_path / f"use{i}.cpp").write_text("void run(float *d);\nvoid use() { run(0); }\n")
    unchecked = """\
    __global__ void k(float *d) { d[threadIdx.x] = 0; }
    void run(float *d) {
        k<<<1, 32>>>(d);
        cudaFree(d);
    }
    """
    fa = _analyze(tmp_path, unchecked, "bad.cu")
    # the launch, then the ignored cudaFree: found after the callers' sources were read (a rebuilt
    # index gives new node objects, so the rule compares nodes by value)
    assert [f.line for f in _rules(fa, "Y1")] == [3, 4]
    assert len(read) == 1 and read[0].endswith("bad.cu")  # read once, for the unchecked launch
