"""The shared-memory wavefront model against the H100's counters for 4/8/16-byte loads by pattern.

benchmarks/results/h100/shared_wide_probe.json was measured with benchmarks/model/shared_wide_probe.py
(one load instruction of the pattern's width per iteration, Nsight Compute 2025.3, driver 580.159.04):
the model must reproduce every measured wavefronts-per-request figure."""

import json
from pathlib import Path

import numpy as np
import pytest

from cudalens.access.memory import shared_wavefronts

RESULT = Path(__file__).parents[2] / "benchmarks" / "results" / "h100" / "shared_wide_probe.json"



def _probe_module():
    """benchmarks/model/shared_wide_probe.py, whose PATTERNS table names each probe kernel's pattern."""
    import importlib.util

    path = Path(__file__).parents[2] / "benchmarks" / "model" / "shared_wide_probe.py"
    spec = importlib.util.spec_from_file_location("shared_wide_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PATTERNS = _probe_module().PATTERNS


@pytest.mark.parametrize("kernel", sorted(PATTERNS))
def test_model_equals_the_h100_counters(kernel):
    measured = {r["kernel"]: r["measured_wavefronts_per_request"] for r in json.loads(RESULT.read_text())["rows"]}
    width, index = PATTERNS[kernel]
    addr = np.array([[index(t) * width for t in range(32)]], dtype=np.int64)
    ways, waves, ideal = shared_wavefronts(addr, np.ones_like(addr, dtype=bool), width)
    assert waves[0] == pytest.approx(measured[kernel], abs=0.01)
    assert 1 <= ideal[0] <= waves[0]
    # only the stride-2 16-byte pattern has a bank conflict (lanes t and t+4 of a half share banks)
    assert ways[0] == (2.0 if kernel == "ld16_stride2" else 1.0)


def test_compiler_vectorized_broadcast_loads_are_predicted_from_the_sass(nvcc_toolchain):
    """examples/access/matmul.cu: `as[threadIdx.y][q]` in the q loop is a 4-byte broadcast that nvcc
    merges into LDS.128 (four iterations per request). With the SASS, the model predicts what the
    H100 measured in access_validation.json: 2 wavefronts per request for ab_tile_a, and
    (2 x 1/4 + 1 x 1) / (1/4 + 1) = 1.2 for ab_tile_ab, whose other load `bs[q][threadIdx.x]` stays
    4 bytes wide."""
    from cudalens.access.model import analyze_model
    from cudalens.compiled import compile_file
    from cudalens.evidence.join import compiled_shared_loads
    from cudalens.source.parse import parse_file

    path = Path(__file__).parents[2] / "examples" / "access" / "matmul.cu"
    model = analyze_model(parse_file(path), block=(32, 32, 1))
    compiled = compile_file(path, cc="9.0")
    got = {}
    for name in ("ab_tile_a", "ab_tile_ab"):
        k = next(k for k in model.kernels if k.name == name)
        loads = [(wf, w) for a, wf, w in compiled_shared_loads(k.accesses, compiled.kernels[name])
                 if a.space == "shared" and a.op == "load"]
        got[name] = sum(wf * w for wf, w in loads) / sum(w for _wf, w in loads)
    measured = {r["kernel"]: r["measured"] for r in
                json.loads((RESULT.parent / "access_validation.json").read_text())["results"]
                if r["quantity"] == "shared_ld_wavefronts_per_request" and r["kernel"] in got}
    assert got == pytest.approx({"ab_tile_a": 2.0, "ab_tile_ab": 1.2})
    assert got == pytest.approx(measured, abs=0.02)
