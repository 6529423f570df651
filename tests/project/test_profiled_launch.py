"""--counters with the details page next to the source page: the line check compares the evaluation
under the launch ncu profiled, among the distinct launches the tool found (a loop over block sizes
in main, llm.c dev/cuda's form). Both pages are written here the way ncu exports them; the measured
figure is computed from the addresses of the profiled block size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _ncu_pages import csv_text, sass_row, source_page
from cudalens.cli import main
from cudalens.profile.ncu_launch import parse_launches

MAIN = """#include <cstdio>
__global__ void sweep(float *o, const float *in) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  o[t] = in[threadIdx.x * (1024 / blockDim.x)];
}

void launch(float *o, const float *in, int n, int block_size) {
  sweep<<<n / block_size, block_size>>>(o, in);
}

int main() {
  int n = 1 << 20;
  float *o, *in;
  int block_sizes[] = {32, 256, 1024};
  for (int j = 0; j < 3; j++) {
    int block_size = block_sizes[j];
    launch(o, in, n, block_size);
  }
  return 0;
}
"""
LOAD_LINE = 4
N = 1 << 20
MANGLED = "_Z5sweepPfPKf"


def sectors_per_request(block: int) -> int:
    """Distinct 32-byte sectors of one warp's 32 loads (every warp of the block reads the same)."""
    return len({lane * (1024 // block) * 4 // 32 for lane in range(32)})


def load_page(path: Path, block: int) -> str:
    """The source page of the load's line when ``block`` threads a block ran (every warp full)."""
    warps = N // 32
    load = sass_row(0xc0, "LDG.E R2, desc[UR4][R2.64]", warps, warps * sectors_per_request(block), warps * 4, 32)
    return source_page(path, [(MANGLED, LOAD_LINE, "  o[t] = in[threadIdx.x * (1024 / blockDim.x)];", [load])])


def details_page(block: int) -> str:
    """ncu --csv --page details of the one profiled launch (a few of its metric rows)."""
    header = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    rows = [header]
    for metric, unit, value in (("Branch Instructions", "inst", "2,048"), ("Branch Efficiency", "%", "100")):
        rows.append(["0", "4242", "sweep", "127.0.0.1", MANGLED, "1", "7", f"({block}, 1, 1)",
                     f"({N // block}, 1, 1)", "0", "9.0", "Source Counters", metric, unit, value])
    return csv_text(rows)


def test_details_page_is_read():
    (launch,) = parse_launches(details_page(256))
    assert (launch.kernel, launch.block, launch.grid) == (MANGLED, (256, 1, 1), (N // 256, 1, 1))


@pytest.fixture(scope="module")
def project(tmp_path_factory, nvcc_toolchain):
    root = tmp_path_factory.mktemp("sweep")
    (root / "main.cu").write_text(MAIN)
    (root / "source.csv").write_text(load_page(root / "main.cu", 256))
    for b in (256, 512):
        (root / f"details_{b}.csv").write_text(details_page(b))
    return root


def _load_check(root: Path, monkeypatch, *counters: str) -> dict:
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(root / "cache"))
    out = root / "r.json"
    args = ["analyze", str(root / "main.cu"), "--format", "json", "-o", str(out)]
    for c in counters:
        args += ["--counters", str(root / c)]
    assert main(args) in (0, 1)
    d = json.loads(out.read_text())
    (check,) = [c for c in d["line_checks"] if c["line"] == LOAD_LINE and c["quantity"].startswith("global load")]
    return check | {"notes": d.get("evidence_notes") or [], "kernel": next(k for k in d["kernels"] if k["name"] == "sweep")}


def test_the_profiled_launch_is_evaluated_when_the_tool_found_it(project, monkeypatch):
    assert sectors_per_request(256) != sectors_per_request(32)
    c = _load_check(project, monkeypatch, "source.csv", "details_256.csv")
    assert c["kernel"]["block"] == [32, 1, 1]  # the representative: the first launch in program order
    assert c["measured"] == sectors_per_request(256)
    assert c["predicted"] == sectors_per_request(256) and c["agree"] is True
    assert "evaluated under the profiled launch, found at main.cu:8" in c["reason"]


def test_without_the_details_page_the_representative_launch_is_compared(project, monkeypatch):
    c = _load_check(project, monkeypatch, "source.csv")
    assert c["predicted"] == sectors_per_request(32) and c["agree"] is False


def test_a_profiled_launch_the_tool_did_not_find_is_said_not_adopted(project, monkeypatch):
    c = _load_check(project, monkeypatch, "source.csv", "details_512.csv")
    assert c["predicted"] == sectors_per_request(32)
    assert "not among the launches cudalens found" in c["reason"] and "(512, 1, 1)" in c["reason"]
    assert any("not among the launches cudalens found" in n for n in c["notes"])


def test_both_pages_in_one_file(project, monkeypatch):
    both = project / "both.csv"
    both.write_text(load_page(project / "main.cu", 256) + details_page(256))
    c = _load_check(project, monkeypatch, "both.csv")
    assert c["predicted"] == c["measured"] == sectors_per_request(256) and c["agree"] is True
