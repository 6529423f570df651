"""Regression tests: each input the fuzz harness (benchmarks/check/fuzz_analyzer.py) found crashing,
hanging or leaking a Python exception, reduced to its core. Each must now be analysed, within
seconds, with every note in our own words."""

from __future__ import annotations

import re
import time

import pytest

from cudalens.pipeline import analyze_file

PY_EXC = re.compile(r"\b\w+(Error|Exception)\b|Traceback")

DEEP_SHIFT = "int nh = 1" + " << 1" * 3000 + ";\n"

CASES = {
    # rule E2 divided by zero: a launch with block -1 (zero warps)
    "negative block at a launch": (
        "__global__ void t(float *d) { d[threadIdx.x] = 0; }\n"
        "void run(float *d) { t<<<dim3(65535, 65535, 65535), -1, 0>>>(d); }\n"),
    # folding (1.5 << 2): TypeError from Python's float << int
    "shift of a floating value": (
        "__global__ void r(float *o) {\n  if (threadIdx.x == (1.5 << 2)) { o[blockIdx.x] = 0; }\n}\n"),
    # 3000 nested shifts: RecursionError in the rules' constant folding
    "3000 nested shifts": (
        "__global__ void n(float *o) {\n" + DEEP_SHIFT + "  o[threadIdx.x] = nh;\n}\n"),
    # a launch block of 1024x1024x64 threads: the access model enumerated 67 million threads
    "huge launch block": (
        "__global__ void s(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }\n"
        "void p(float *x, int n) { s<<<-1, dim3(1024, 1024, 64)>>>(x, n); }\n"),
    "4096x4096 dim3 block": (
        "__global__ void s(float *x) { x[threadIdx.y * 4096 + threadIdx.x] = 1; }\n"
        "void p(float *x) { dim3 b(4096, 4096, 1); s<<<1, b>>>(x); }\n"),
    # dim3 threads(1e400): OverflowError converting infinity to int
    "infinite launch dimension": (
        "__global__ void a(float *x) { x[threadIdx.x] = 1; }\n"
        "void add(float *x) { dim3 threads(1e400); a<<<1, threads>>>(x); }\n"),
    # more hostile constants, each once
    "huge literals": (
        "#define BIG 340282366920938463463374607431768211457\n#define INF (1.0 / 0.0)\n"
        "__global__ void h(float *x) {\n  int a = BIG; int b = 1 << 4000; int c = (1 << -1);\n"
        "  x[threadIdx.x + a + b + c] = INF; x[(int)1e400] = 0; x[7 % 0] = 1; x[(~1.5)] = 2;\n}\n"),
    "self-doubling assignments": (
        "__global__ void d(float *buf) {\n  int nd = threadIdx.x;\n" + "  nd = nd + nd;\n" * 400
        + "  buf[nd] = 1;\n}\n"),
    "mutually recursive macros": (
        "#define A (B + 1)\n#define B (A + 1)\n__global__ void m(float *x) { x[threadIdx.x * A] = 1; }\n"
        "void q(float *x) { m<<<A, B>>>(x); }\n"),
    "deeply nested ifs": (
        "__global__ void f(float *x) {\n" + "if (threadIdx.x) {" * 2000 + "x[threadIdx.x] = 1;" + "}" * 2000
        + "\n}\n"),
    # 10,000 reassignments in a host function before a launch: each launch argument re-evaluated
    # every earlier definition (quadratic: more than 60 s); now each is evaluated once
    "thousands of host reassignments": (
        "__global__ void t(float *d, int n) { d[threadIdx.x] = n; }\n"
        "void run(float *d) {\n  int ns = 1;\n" + "  ns = ns * 3 + 1;\n" * 10000
        + "  int m = 64;\n  t<<<m, 256>>>(d, m);\n  t<<<ns, m>>>(d, ns);\n}\n"),
    "deeply nested calls": (
        "__global__ void c(float *x) {\n  int v = " + "min(1, " * 3000 + "threadIdx.x" + ")" * 3000
        + ";\n  x[v] = 1;\n}\n"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fuzz_reproducer_is_analysed(name, tmp_path):
    path = tmp_path / "input.cu"
    path.write_text(CASES[name])
    t0 = time.perf_counter()
    fa = analyze_file(path, compile=False)
    elapsed = time.perf_counter() - t0
    assert elapsed < 20, f"{elapsed:.1f} s"
    for line in (*fa.notes, *fa.model.problems):
        assert not PY_EXC.search(line), line


def test_too_deep_kernel_says_so(tmp_path):
    path = tmp_path / "deep.cu"
    path.write_text(CASES["deeply nested ifs"] + "__global__ void ok(float *y) { y[threadIdx.x] = 2; }\n")
    fa = analyze_file(path, compile=False)
    deep, ok = sorted(fa.model.kernels, key=lambda k: k.line)
    assert any("unmodelled: nesting too deep" in p for p in deep.problems)
    assert ok.accesses and ok.accesses[0].pattern == "coalesced"  # the rest of the file is still modelled


def test_invalid_launch_block_is_not_modelled(tmp_path):
    path = tmp_path / "big.cu"
    path.write_text(CASES["4096x4096 dim3 block"])
    fa = analyze_file(path, compile=False)
    (site,) = fa.model.launch_sites
    assert site.block_dims == (4096, 4096, 1)  # what the source says, for the rules
    (k,) = fa.model.kernels
    assert k.block_dims == (256, 1, 1)  # the model evaluates a block a GPU can run


def test_non_launch_sizes_are_not_derived(tmp_path):
    path = tmp_path / "neg.cu"
    path.write_text(CASES["negative block at a launch"] + CASES["infinite launch dimension"])
    fa = analyze_file(path, compile=False)
    sites = {s.kernel: s for s in fa.model.launch_sites}
    assert sites["t"].block_dims is None and sites["a"].block_dims is None
    assert sites["t"].grid_dims == (65535, 65535, 65535) and sites["a"].grid_dims == (1, 1, 1)
