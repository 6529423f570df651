"""Nsight Compute's per-instruction source page (captured on the H100 for our own feature kernels,
tests/access/ptx/features.cu, with the launches in the .plan.json beside it) read per source line
and checked against the compiled access model's predictions for the same launches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _sources import line_of
from cudalens.errors import InputError
from cudalens.profile.ncu_source import check_lines, line_counters, parse_source_csv, sass_class
from cudalens.quantities import RATIO

FIX = Path(__file__).parent.parent / "fixtures"
CSV = FIX / "ncu_source_h100_features.csv"
PLAN = FIX / "ncu_source_h100_features.plan.json"
FEATURES = Path(__file__).parent.parent / "access" / "ptx" / "features.cu"


def _line(text: str) -> int:
    return line_of(FEATURES, text)


@pytest.fixture(scope="module")
def rows():
    return parse_source_csv(CSV.read_text())


def test_rows_carry_kernel_file_line_and_counters(rows):
    kernels = {r.kernel for r in rows}
    assert "_Z9vec4_copyPK6float4PS_" in kernels and len(kernels) == 10
    ldg = [r for r in rows if r.kernel == "_Z9vec4_copyPK6float4PS_" and r.opcode.startswith("LDG")]
    (r,) = ldg
    assert r.file.endswith("features.cu") and r.line == _line("out[i] = in[i];  // 16")
    assert r.opcode == "LDG.E.128" and sass_class(r) == ("global", "load")
    assert r.executed == 64 and r.sectors == 64 * 16  # 8 blocks x 8 warps, 16 sectors each


def test_per_line_counters(rows):
    c = line_counters(rows)
    key = ("_Z11tmpl_strideILi32EEvPKfPf", str(FEATURES.resolve()).replace("/work/main", "/work/main"),
           _line("out[i] = in[i * S];"), "global", "load")
    hit = next(v for k, v in c.items() if k[0] == key[0] and k[2] == key[2] and k[3:] == key[3:])
    assert hit.sectors_per_request == 32.0 and not hit.predicated
    sh = next(v for k, v in c.items() if k[0] == "_Z20transpose_naive_tilePKfPfi" and k[3:] == ("shared", "load"))
    assert sh.nway == 32.0


def test_model_agrees_with_the_h100_per_line(rows, nvcc_toolchain):
    from cudalens.access.ptx_eval import evaluate
    from cudalens.compiled.ptx import compile_ptx

    module = compile_ptx(FEATURES, "9.0", toolchain=nvcc_toolchain).module
    counters = line_counters(rows)
    plan = json.loads(PLAN.read_text())
    checked = 0
    for k in plan["kernels"]:
        fn = module.function(k["name"])
        params = {i: p["value"] for i, p in enumerate(k["params"]) if p["kind"] != "ptr"}
        blocks = tuple((x, 0, 0) for x in range(k["grid"][0]))
        ev = evaluate(module, fn, tuple(k["block"]), tuple(k["grid"]), params, blocks=blocks)
        files = {f for f in module.files.values()} | {str(FEATURES)}
        # the capture was taken from /work/main/tests/...; match on the file name
        local = {key[:1] + ("features.cu",) + key[2:]: v for key, v in counters.items()}
        preds = [p.__class__(**{**p.to_dict(), "file": "features.cu"}) for p in ev.predictions]
        for c in check_lines(preds, local, k["name"], files={"features.cu"} | files):
            assert c.measured is not None, c
            assert c.agree, c
            checked += 1
    assert checked >= 20


def test_tolerance_and_bad_input():
    assert RATIO.agrees(32.0, 30.0) and not RATIO.agrees(4.0, 8.0) and RATIO.agrees(1.0, 1.4)
    with pytest.raises(InputError):
        parse_source_csv("hello, world\n1,2\n")
