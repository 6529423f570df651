"""The batch scheduler's scan for kernel names (``kernel_names``): one search from each ``__global__``
to its ``;``, ``{`` or ``(``, equal to the token walk it replaced (kept here as the reference) on any text."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from cudalens.pipeline.kernel_names import kernel_names

_GLOBAL_OR_END = re.compile(r"__global__|[;{(]")
_NAME = re.compile(r"[A-Za-z_]\w*")
_WORD = re.compile(r"\w*")


def _walked(text: str) -> frozenset[str]:
    """The former scan: every ``__global__``, ``;``, ``{`` and ``(`` in turn."""
    out: set[str] = set()
    start = -1
    for m in _GLOBAL_OR_END.finditer(text):
        if m.group() == "__global__":
            start = m.end() if start < 0 else start
            continue
        if m.group() == "(" and start >= 0:
            head = text[start:m.start()].rstrip()
            word = _WORD.match(head[::-1])
            name = word.group()[::-1] if word is not None else ""
            if len(name) < len(head) and _NAME.fullmatch(name):
                out.add(name)
        start = -1
    return frozenset(out)


_TOKENS = ["__global__", "__global", "_", " ", "\n", "void", "k", "x1", "(", ")", ";", "{", "}", "<", ">", "*",
           "template", "static", "9", "é"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=40))
def test_equal_to_the_token_walk(tokens):
    text = "".join(tokens)
    assert kernel_names(text) == _walked(text)


def test_declarations():
    src = ("__global__ void a(int x);\ntemplate <int N> __global__ void c(int) {}\n"
           "static __global__ __global__ void d() {}\n__global__ int e;\n__global__ ( f)\n")
    assert kernel_names(src) == {"a", "c", "d"} == _walked(src)


def test_attributes_before_the_name():
    """llm.c's ``__global__ void __launch_bounds__(16*16) matmul_forward_kernel4(...)``: the kernel's name,
    not the attribute's (the token walk named ``__launch_bounds__``)."""
    src = ("__global__ void __launch_bounds__(16*16) k4(float* out) {}\n"
           "__global__ void __launch_bounds__(MAX(1024, f(2)), 2)\nk5(int) {}\n"
           "__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)k6();\n"
           "__global__ void __launch_bounds__(8;\n__global__ void __launch_bounds__(8) { }\n__global__ void __maxnreg__(")
    assert kernel_names(src) == {"k4", "k5", "k6"}
