"""--counters compares the lines of the project's headers that a kernel inlines (issue #26, point 6).

llm.c's ``common.h`` helpers, cuda-samples' ``*_common.cuh``: the per-kernel source page holds, for a
header line, the SASS of every instance inlined into that kernel. Reproduced here with a helper
``ld`` in ``helper.h`` inlined into three kernels: ``unit`` (stride 1), ``spread`` (stride 8) and
``both`` (both calls, so the header line holds two loads whose figures average).

The page is written by hand in the shape of the real H100 pages (``File Path`` of the header,
``Function Name``, a line row, then its SASS rows); each load's sectors are worked out here from its
lane addresses, one full block of 64 threads per launch (2 warps).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _ncu_pages import sass_row, source_page
from cudalens.cli import main

HELPER = "#pragma once\n__device__ __forceinline__ float ld(const float *p, int i) {\n  return p[i];\n}\n"
HELPER_LINE = 3
MAIN = """#include "helper.h"
__global__ void unit(float *o, const float *in) { int t = threadIdx.x; o[t] = ld(in, t); }
__global__ void spread(float *o, const float *in) { int t = threadIdx.x; o[t] = ld(in, t * 8); }
__global__ void both(float *o, const float *in) { int t = threadIdx.x; o[t] = ld(in, t) + ld(in, t * 8); }
int main() {
  float *o = 0, *in = 0;
  unit<<<1, 64>>>(o, in);
  spread<<<1, 64>>>(o, in);
  both<<<1, 64>>>(o, in);
  return 0;
}
"""
WARPS = 2
KERNELS = {"_Z4unitPfPKf": (1,), "_Z6spreadPfPKf": (8,), "_Z4bothPfPKf": (1, 8)}  # strides (floats) of the loads


def sectors(stride: int) -> int:
    return len({lane * stride * 4 // 32 for lane in range(32)})


def page(helper: Path, wrong: str | None = None) -> str:
    """The page of the header's line in each kernel (``wrong``: a kernel whose loads read 4 sectors each)."""
    return source_page(helper, [
        (kernel, HELPER_LINE, "  return p[i];",
         [sass_row(0x80 + 0x10 * n, "LDG.E R2, desc[UR4][R2.64]", WARPS,
                   WARPS * (4 if kernel == wrong else sectors(s)), WARPS * 4, 32) for n, s in enumerate(strides)])
        for kernel, strides in KERNELS.items()])


@pytest.fixture(scope="module")
def project(tmp_path_factory, nvcc_toolchain):
    root = tmp_path_factory.mktemp("header")
    (root / "Makefile").write_text("all:\n\tnvcc -lineinfo main.cu\n")
    (root / "helper.h").write_text(HELPER)
    (root / "main.cu").write_text(MAIN)
    (root / "page.csv").write_text(page(root / "helper.h"))
    (root / "wrong.csv").write_text(page(root / "helper.h", wrong="_Z6spreadPfPKf"))
    return root


def analyze(root: Path, csv_name: str) -> dict:
    out = root / f"{csv_name}.json"
    assert main(["analyze", str(root / "main.cu"), "--counters", str(root / csv_name), "--format", "json",
                 "-o", str(out)]) in (0, 1)
    return json.loads(out.read_text())


def test_a_header_line_is_checked_per_kernel_that_inlines_it(project, monkeypatch):
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(project / "cache"))
    d = analyze(project, "page.csv")
    checks = {c["kernel"]: c for c in d["line_checks"] if c["line"] == HELPER_LINE and "load" in c["quantity"]}
    assert set(checks) == set(KERNELS)
    for kernel, strides in KERNELS.items():
        c = checks[kernel]
        assert Path(c["file"]).name == "helper.h", c  # reported with the header's path
        expected = sum(sectors(s) for s in strides) / len(strides)  # one request per load per warp
        assert c["predicted"] == pytest.approx(expected) and c["measured"] == pytest.approx(expected), c
        assert c["agree"] is True
    assert not [f for f in d["findings"] if f["rule"] == "V1"]


def test_a_header_line_disagreement_names_the_header(project, monkeypatch):
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(project / "cache"))
    d = analyze(project, "wrong.csv")
    c = next(c for c in d["line_checks"] if c["kernel"] == "_Z6spreadPfPKf" and c["line"] == HELPER_LINE)
    assert c["agree"] is False and c["predicted"] == sectors(8) and c["measured"] == 4
    v1 = [f for f in d["findings"] if f["rule"] == "V1"]
    assert [(Path(f["file"]).name, f["line"]) for f in v1] == [("helper.h", HELPER_LINE)]
