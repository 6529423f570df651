"""The analysis JSON says which layer produced each kernel's access figures: the warp access model
on the compiled PTX when the file compiles, the source model when it does not."""

from __future__ import annotations

from pathlib import Path

from cudalens.pipeline import analyze

FEATURES = Path(__file__).parent.parent / "access" / "ptx" / "features.cu"


def test_compiled_layer_for_a_file_that_compiles(nvcc_toolchain):
    d = analyze([str(FEATURES)]).to_dict()
    k = next(k for k in d["kernels"] if k["name"] == "vec4_copy")
    assert k["access_layer"] == "compiled-ptx"
    (inst,) = k["compiled_access"]
    preds = {(p["line"], p["quantity"]): p for p in inst["predictions"]}
    line = next(i for i, t in enumerate(FEATURES.read_text().splitlines(), 1) if "out[i] = in[i];  // 16" in t)
    assert preds[(line, "global load sectors/request")]["value"] == 16.0
    assert preds[(line, "global load sectors/request")]["layer"] == "compiled-ptx"
    tmpl = next(k for k in d["kernels"] if k["name"] == "tmpl_stride")
    assert len(tmpl["compiled_access"]) == 2  # both instantiations


def test_source_layer_when_the_file_does_not_compile(nvcc_toolchain, tmp_path):
    f = tmp_path / "broken.cu"
    f.write_text("__global__ void k(float *a) {\n  a[threadIdx.x * 2] = not_declared;\n}\n")
    d = analyze([str(f)]).to_dict()
    (k,) = d["kernels"]
    assert k["access_layer"] == "source" and "compiled_access" not in k
    assert k["accesses"][0]["pattern"] is not None
