"""--define serves the access model (parameter values) and nvcc (macros); a kernel parameter's name
must not become a macro (``-Dn=64`` rewrites the ``n`` of CUDA's math headers)."""

from __future__ import annotations

import pytest

from cudalens.cli import main
from cudalens.pipeline import analyze, analyze_file, compiler_defines, macro_names
from cudalens.source.parse import parse_source

KERNEL = """#include <cuda_runtime.h>
#define TILE 32
#ifdef USE_FAST
#define SCALE 2.0f
#endif
#if defined(WIDE) && VEC > 1 // n is not tested here
#endif
template <int BLOCK>
__global__ void scale(float* __restrict__ x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = sqrtf(x[i]) * 2.0f;
}
"""


def test_macro_names_are_the_defined_and_tested_names():
    assert macro_names(KERNEL) == {"TILE", "USE_FAST", "SCALE", "WIDE", "VEC"}


def test_parameter_names_are_not_passed_to_the_compiler_unless_they_are_macros():
    model = parse_source(KERNEL, "k.cu")
    defines = {"n": 64, "BLOCK": 128, "TILE": 16, "USE_FAST": None, "VEC": 4, "OTHER": 3}
    assert compiler_defines(model, defines) == {"TILE": 16, "USE_FAST": None, "VEC": 4, "OTHER": 3}
    tested = parse_source(KERNEL.replace("#ifdef USE_FAST", "#ifdef n"), "k.cu")
    assert "n" in compiler_defines(tested, {"n": 64})  # the file itself uses n as a macro


def _write(tmp_path, text):
    path = tmp_path / "k.cu"
    path.write_text(text)
    return str(path)


def test_kernel_taking_int_n_compiles_with_define_n(tmp_path, nvcc_toolchain):
    from cudalens.compiled import compile_file
    from cudalens.compiled.model import CompileError

    path = _write(tmp_path, KERNEL.split("template <int BLOCK>\n")[0] + KERNEL.split("template <int BLOCK>\n")[1])
    with pytest.raises(CompileError):  # what analyze used to do: n becomes a macro inside math_functions.h
        compile_file(path, "9.0", {"n": "64"}, use_cache=False)
    fa = analyze_file(path, defines={"n": 64})
    assert fa.compiled is not None and "scale" in fa.compiled.kernels
    assert not [n for n in fa.notes if "not compiled" in n]
    (k,) = fa.model.kernels
    assert any(a.array == "x" for a in k.accesses)


def test_cli_define_n_keeps_the_compiled_layer(tmp_path, capsys, nvcc_toolchain):
    import json

    path = _write(tmp_path, KERNEL.replace("template <int BLOCK>\n", ""))
    rc = main(["analyze", path, "--define", "n=64", "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["files"][0]["compiled"] is True and d["defines"] == {"n": 64}
    assert analyze([path], defines={"n": 64}).files[0].compiled is not None
