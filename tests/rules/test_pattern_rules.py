"""Edge cases of the pattern rules that the example pairs do not cover."""

from __future__ import annotations

import dataclasses

import pytest

from cudalens.rules.context import RuleContext
from cudalens.rules.registry import run_rules
from cudalens.source.parse import parse_source


def run(code: str, rule_id: str, cc: str = "9.0"):
    findings, problems = run_rules(RuleContext(source=parse_source(code, "t.cu"), cc=cc), only=[rule_id])
    assert problems == []
    return findings


KERNEL = "__global__ void k(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] = 1.0f; }\n"


@pytest.mark.parametrize("block,idle", [(48, 16), (100, 28), (33, 31)])
def test_e2_impact_is_the_share_of_idle_lanes(block, idle):
    (f,) = run(KERNEL + f"void h(float *d) {{ k<<<1000, {block}>>>(d, 1); }}\n", "E2")
    warps = -(-block // 32)
    assert f.impact == pytest.approx(idle / (warps * 32))
    assert f"{idle} idle lanes" in f.message


def test_e4_depends_on_the_target_sm_count():
    code = KERNEL + "void h(float *d) { k<<<120, 256>>>(d, 1); }\n"
    assert [f.line for f in run(code, "E4", cc="9.0")] == [2]   # 132 SMs
    assert run(code, "E4", cc="8.0") == []                       # 108 SMs
    assert run(code, "E4", cc="1.0") == []                       # unknown target: not established


def test_i4_ignores_kernels_without_float():
    code = "__global__ void k(int *x) { x[threadIdx.x] = x[threadIdx.x] * 0.5; }\n"
    assert run(code, "I4") == []


def test_i5_reports_integer_division_exponent_value():
    (f,) = run("__device__ float f(float x) { return powf(x, 2 / 3); }\n", "I5")
    assert "equals 0" in f.message


def test_i1_literal_and_unknown_divisors_are_not_flagged():
    code = "__global__ void k(int *x, int m) { int i = threadIdx.x; x[i] = i / 8 + i % m + (-i) / 4; }\n"
    assert run(code, "I1") == []


def test_sh5_needs_a_single_warp_guard():
    code = ("__global__ void k(float *b) { __shared__ float s[64]; int t = threadIdx.x;\n"
            "if (t < 64) { s[t] = b[t]; __syncthreads(); b[t] = s[63 - t]; } }\n"
            "void h(float *d) { k<<<1, 64>>>(d); }\n")
    assert run(code, "SH5") == []


def test_t1_sync_inside_the_timed_loop_counts():
    code = KERNEL + ("double h(float *d) { double t0 = omp_get_wtime();\n"
                     "for (int r = 0; r < 5; ++r) { k<<<1, 256>>>(d, 1); cudaStreamSynchronize(0); }\n"
                     "return omp_get_wtime() - t0; }\n")
    assert run(code, "T1") == []


def test_y1_user_wrappers_count_as_checks():
    code = KERNEL + (
        "static void cudaCheck(cudaError_t e) { if (e != cudaSuccess) throw 1; }\n"
        "static void launch_check() { cudaCheck(cudaGetLastError()); }\n"
        "void h(float *d) { cudaCheck(cudaMalloc(&d, 4)); k<<<1, 32>>>(d, 1); launch_check(); }\n")
    assert run(code, "Y1") == []


def test_y1_calls_inside_the_launch_or_of_the_standard_library_are_not_checks():
    # dim3(...) in the launch's own configuration is not a call after the launch; std::chrono and
    # clock() are no project's error check (found by the check-examples comparison of #15)
    code = KERNEL + (
        "void h(float *d) { k<<<dim3(4, 4), dim3(32)>>>(d, 1); }\n"
        "double t(float *d) { k<<<1, 32>>>(d, 1); auto t1 = std::chrono::steady_clock::now(); return 0; }\n"
        "void c(float *d) { k<<<1, 32>>>(d, 1); clock_t c1 = clock(); }\n"
        "void w(float *d) { k<<<1, 32>>>(d, 1); getLastCudaError(\"k\"); }\n")
    assert [f.line for f in run(code, "Y1")] == [2, 3, 4]  # the unseen wrapper after line 5's launch may check


def test_m1_setup_loop_over_devices_is_not_hot():
    code = KERNEL + ("void h(float **d, int g) { for (int i = 0; i < g; ++i) { cudaSetDevice(i);\n"
                     "cudaMalloc(&d[i], 4); k<<<1, 256>>>(d[i], 1); } }\n")
    assert run(code, "M1") == []


@pytest.mark.parametrize("rule_id", ["I4", "I8", "X1", "Y1", "Y2", "SH5", "I18"])
def test_rules_without_a_syntax_tree_say_nothing(rule_id):
    source = parse_source(KERNEL + "int main() { float *d; cudaMalloc(&d, 4); k<<<1, 32>>>(d, 1); }\n", "t.cu")
    bare = dataclasses.replace(source, tree=None,
                               kernels=tuple(dataclasses.replace(k, node=None) for k in source.kernels))
    findings, problems = run_rules(RuleContext(source=bare), only=[rule_id])
    assert problems == [] and findings == []


def analyzed(code: str, tmp_path):
    """The pipeline's analysis of ``code`` (the access model sets ``reuse``), without compiling."""
    from cudalens.pipeline import analyze_file

    path = tmp_path / "t.cu"
    path.write_text(code)
    return analyze_file(str(path), compile=False)


def g8(code: str, tmp_path) -> list:
    return [f for f in analyzed(code, tmp_path).findings if f.rule == "G8"]


G8_HEADER_POINTER = """__global__ void k(float *out, const float *in, int n) {
  for (const float *p = in; p < in + n; p += blockDim.x) out[0] += p[threadIdx.x];
}
"""


def test_g8_pointer_advanced_in_the_loop_header_is_not_a_fixed_address(tmp_path):
    # ``p`` moves by blockDim.x every iteration: ``p[threadIdx.x]`` reads new addresses each time;
    # ``out[0]`` is read and written in the loop with the same address: that one is G8
    fa = analyzed(G8_HEADER_POINTER, tmp_path)
    (through_p,) = [a for rec in fa.kernels for a in rec.kernel.accesses if a.array == "in"]
    assert through_p.reuse is not None and through_p.reuse["invariant_in_loop"] is False
    assert [f.message.split("[")[0] for f in fa.findings if f.rule == "G8"] == ["out"]


def test_g8_do_while_zero_is_one_pass_not_a_loop(tmp_path):
    once = "__global__ void k(int *a) { do { a[0]++; } while (0); }\n"
    assert g8(once, tmp_path) == []
    assert g8(once.replace("while (0)", "while (false)"), tmp_path) == []
    # a do-while that repeats still re-reads a[0] on every iteration
    again = g8(once.replace("while (0)", "while (a[1] > 0)"), tmp_path)
    assert [f.line for f in again if f.message.startswith("a[0]")] == [1]
