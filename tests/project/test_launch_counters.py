"""--counters with an imported source page on a kernel in an ``#include``d .cu launched from the
including unit: the lines of the included file are checked, under the launch found there.

The page is written here the way ncu exports it (File Path, Function Name, a line row, then its
SASS rows). Its counters are those of a 16-thread block: each of the warp's 16 active lanes reads
its own 32-byte sector (stride 32 floats = 128 bytes), so 16 sectors per request, where the
256-thread assumption would predict 32.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _ncu_pages import sass_row, source_page
from cudalens.cli import main

KERNELS = "__global__ void spread(float *o, const float *in, int s) {\n  o[threadIdx.x * s] = in[threadIdx.x * s];\n}\n"
MAIN = '#include "kernels.cu"\nint main() { float *o = 0, *i = 0; spread<<<64, 16>>>(o, i, 32); return 0; }\n'
BLOCKS, LANES, STRIDE_BYTES = 64, 16, 32 * 4


def page(kernels: Path) -> str:
    sectors_per_request = len({lane * STRIDE_BYTES // 32 for lane in range(LANES)})
    ideal = LANES * 4 // 32
    rows = [sass_row(addr, sass, BLOCKS, BLOCKS * sectors_per_request, BLOCKS * ideal, LANES)
            for addr, sass in ((0x80, "LDG.E R2, desc[UR4][R2.64]"), (0xa0, "STG.E desc[UR4][R4.64], R2"))]
    return source_page(kernels, [("_Z6spreadPfPKfi", 2, "  o[threadIdx.x * s] = in[threadIdx.x * s];", rows)])


@pytest.fixture(scope="module")
def project(tmp_path_factory, nvcc_toolchain):
    root = tmp_path_factory.mktemp("included")
    (root / "Makefile").write_text("all:\n\tnvcc -lineinfo main.cu\n")
    (root / "kernels.cu").write_text(KERNELS)
    (root / "main.cu").write_text(MAIN)
    (root / "page.csv").write_text(page(root / "kernels.cu"))
    return root


def test_included_cu_lines_are_checked_under_the_launch_of_the_including_unit(project, monkeypatch):
    tmp_path = project
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "r.json"
    assert main(["analyze", str(tmp_path / "main.cu"), "--counters", str(tmp_path / "page.csv"), "--format", "json",
                 "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    kernel = next(k for k in d["kernels"] if k["name"] == "spread")
    assert kernel["launch"]["from"] == "launch: main.cu:2" and kernel["block"] == [LANES, 1, 1]
    checks = {(c["line"], c["quantity"]): c for c in d["line_checks"]}
    for q in ("global load sectors/request", "global store sectors/request"):
        c = checks[(2, q)]
        assert c["file"].endswith("kernels.cu") and c["agree"] is True and c["predicted"] == c["measured"] == LANES
    assert not [f for f in d["findings"] if f["rule"] == "V1"]
    keys = [(f["rule"], f["kernel"], f["file"], f["line"], f["message"]) for f in d["findings"]]
    assert len(keys) == len(set(keys))  # each finding once
    assert [k[2] for k in keys if k[0] == "E6"] == [str(tmp_path / "kernels.cu")]  # with the kernel's own file


def test_an_included_cu_analysed_alone_compiles_through_its_unit(project, monkeypatch, capsys):
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(project / "cache"))
    assert main(["analyze", str(project / "kernels.cu"), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    (f,) = d["files"]
    assert f["compiled"] and any("compiled through" in n and n.endswith("main.cu, which includes it") for n in f["notes"])
    (k,) = d["kernels"]
    assert k["launch"]["from"] == "launch: main.cu:2" and k["access_layer"] == "compiled-ptx"
