"""Compiling kernels by C++ name (templates, namespaces) with the wheel toolchain: no GPU needed."""

import pytest

from cudalens.errors import InputError, ToolchainError
from cudalens.measure import kernels as K

SRC = r"""
namespace ns {
template <typename T, int B>
__global__ void scale(T* x, T a, unsigned n) {
    unsigned i = blockIdx.x * B + threadIdx.x;
    if (i < n) x[i] *= a;
}
struct Inner { template <unsigned W, bool P> __device__ static int f(int v) { return P ? v * W : v; } };
template <unsigned W, bool P> __global__ void use(int* out) { out[threadIdx.x] = Inner::f<W, P>(threadIdx.x); }
}
extern "C" __global__ void plain(float* x) { x[threadIdx.x] = 1.0f; }
"""

HOST_PROGRAM = SRC + r"""
#include <cstdio>
int main() { ns::scale<float, 64><<<1, 64>>>(nullptr, 2.0f, 0u); std::printf("x\n"); return 0; }
"""


def _nvrtc_or_skip():
    try:
        return K.compile_named(SRC, ["ns::scale<float, 128>"], (9, 0), compiler="nvrtc")
    except ToolchainError as exc:  # pragma: no cover - CI installs the nvrtc wheel
        pytest.skip(f"NVRTC not usable here: {exc}")


def test_nvrtc_name_expressions_give_the_itanium_symbols():
    out = K.compile_named(SRC, ["ns::scale<float, 128>", "ns::scale<double,256>", "ns::use<32u, true>"],
                          (9, 0), compiler="nvrtc")
    assert out.compiler.startswith("nvrtc")
    assert out.symbols["ns::scale<float,128>"] == "_ZN2ns5scaleIfLi128EEEvPT_S1_j"
    assert out.symbols["ns::scale<double,256>"] == "_ZN2ns5scaleIdLi256EEEvPT_S1_j"
    assert out.symbols["ns::use<32u,true>"].startswith("_ZN2ns3useILj32ELb1EEEvPi")
    assert out.cubin[:4] == b"\x7fELF" and out.arch == "sm_90"
    # every lowered symbol is in the cubin's symbol table
    for sym in out.symbols.values():
        assert sym.encode() in out.cubin
    assert out.symbol("ns::scale< float , 128 >") == out.symbols["ns::scale<float,128>"]


def test_nvcc_compiles_a_whole_program_and_finds_the_template_by_demangling():
    _nvrtc_or_skip()
    with pytest.raises(ToolchainError):  # host code: NVRTC alone refuses it
        K.compile_named(HOST_PROGRAM, ["ns::scale<float, 128>"], (9, 0), compiler="nvrtc")
    out = K.compile_named(HOST_PROGRAM, ["ns::scale<float, 128>", "ns::use<8, false>", "plain"], (9, 0))
    assert out.compiler.startswith("nvcc")
    # the same mangled name NVRTC reports, though the program never launches <float, 128>
    assert out.symbols["ns::scale<float,128>"] == "_ZN2ns5scaleIfLi128EEEvPT_S1_j"
    assert out.symbols["ns::use<8,false>"] == "_ZN2ns3useILj8ELb0EEEvPi"  # 8 -> 8u matched
    assert out.symbols["plain"] == "plain"


def test_build_context_defines_and_includes_reach_the_compiler(tmp_path):
    _nvrtc_or_skip()
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "width.h").write_text("#define WIDTH_FROM_HEADER 4\n")
    src = '#include "width.h"\ntemplate <int N> __global__ void k(int* o) { o[0] = N * WIDTH_FROM_HEADER * EXTRA; }\n'
    build = K.BuildContext(include_dirs=(str(inc),), defines=("EXTRA=3",))
    for compiler in ("nvrtc", "nvcc"):
        out = K.compile_named(src, "k<2>", (9, 0), build=build, compiler=compiler)
        assert out.symbols["k<2>"] == "_Z1kILi2EEvPi"
        assert f"-I{inc}" in out.options and "-DEXTRA=3" in out.options
    with pytest.raises(ToolchainError, match="EXTRA"):  # without the define it cannot compile
        K.compile_named(src, "k<2>", (9, 0), build=K.BuildContext(include_dirs=(str(inc),)), compiler="nvrtc")


def test_build_context_from_a_mapping_or_record():
    b = K.BuildContext.of({"include_dirs": ["/a"], "defines": {"X": None, "Y": 2}, "extra_flags": ["-lineinfo"]})
    assert b == K.BuildContext(("/a",), ("X", "Y=2"), ("-lineinfo",), "c++17")
    assert K.BuildContext.of(None) == K.BuildContext()


def test_missing_kernel_and_bad_names_are_one_line_input_errors():
    _nvrtc_or_skip()
    with pytest.raises(InputError, match=r"'ns::nothere<int>' not found"):
        K.compile_named(HOST_PROGRAM, ["ns::nothere<int>"], (9, 0), compiler="nvcc")
    with pytest.raises(InputError, match=r"'ns::nothere<int>' not found"):
        K.compile_named(SRC, ["ns::nothere<int>"], (9, 0))  # NVRTC fails, nvcc names it
    for bad in ("", "ns::k<float", "3abc", "k<float>>"):
        with pytest.raises(InputError, match="--kernel"):
            K.parse_kernel_names(bad)
    assert K.normalize_name(" ns::k< unsigned int , 4 > ") == "ns::k<unsigned int,4>"
    assert K.arch_of("9.0") == "sm_90" and K.arch_of((8, 6)) == "sm_86"


def test_both_demanglers_spellings_match_the_users_name():
    # GNU c++filt and CUDA's cu++filt write template arguments differently
    gnu = {"_Z7reduce6IfLj256ELb1EEvPT_S1_j": "void reduce6<float, 256u, true>(float*, float*, unsigned int)"}
    cuda = {"_Z7reduce6IfLj256ELb1EEvPT_S1_j": "void reduce6<float, (unsigned int)256, (bool)1>(float *, float *, unsigned int)",
            "_ZN2ns1kIiLi4EEEvv": "void ns::k<int, (int)4>()",
            "_Z1fIiEvPFvT_E": "void f<int>(void (*)(int))"}
    for table in (gnu, cuda):
        got = K._match_symbols(["reduce6<float, 256U, true>"], list(table)[:1], table, b"")
        assert got == {"reduce6<float,256U,true>": "_Z7reduce6IfLj256ELb1EEvPT_S1_j"}
    assert K._match_symbols(["ns::k<int, 4>", "f<int>"], list(cuda)[1:], cuda, b"") == {
        "ns::k<int,4>": "_ZN2ns1kIiLi4EEEvv", "f<int>": "_Z1fIiEvPFvT_E"}
    assert K._function_head("unsigned int ns::g<a<b>, 2>(int)") == "ns::g<a<b>, 2>"
