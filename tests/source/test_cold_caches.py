"""The caches that keep a cold `check` from repeating work (issue #29) give what the work gave."""

from __future__ import annotations

import numpy as np
import pytest

from cudalens.access import memory as M
from cudalens.source import callers
from cudalens.source import scope as S
from cudalens.source.parse import parse_source
from cudalens.source.syntax import parse_tree


def _fresh(text: str, scope: S.FileScope) -> object:
    """The value text's expression with nothing kept from another scope."""
    S._VALUES.clear()
    return S._parse_value_text(text, scope)


def test_a_kept_macro_value_is_reused_only_where_its_names_resolve_alike():
    as_macro = parse_source("#define N 4\n#define M (N * 2)\n")
    as_const = parse_source("const int N = 4;\n#define M (N * 2)\n")
    s_macro = S.FileScope.build(as_macro.tree.root_node, dict(as_macro.defines), [])
    s_const = S.FileScope.build(as_const.tree.root_node, dict(as_const.defines), [])
    want_macro, want_const = _fresh("(N * 2)", s_macro), _fresh("(N * 2)", s_const)
    assert want_macro != want_const  # a symbol for the macro, a number for the constant
    S._VALUES.clear()
    assert [S._parse_value_text("(N * 2)", s) for s in (s_macro, s_const, s_macro)] == [
        want_macro, want_const, want_macro]


def test_macro_values_are_read_once_and_each_read_is_a_new_dict():
    m = parse_source("#define A 3\n#define B (A + 1)\n__global__ void k(float *x) { x[B] = 0; }\n")
    scope = S.FileScope.build(m.tree.root_node, dict(m.defines), [])
    first = scope.macro_values()
    first["A"] = ("n", 99)  # a caller's change stays in its copy
    again = scope.macro_values({"C": 1})
    assert again["A"] == ("n", 3) and again["C"] == 1 and "C" not in scope.macro_values()
    assert scope._macro_map() is scope._macro_map()


HEADERS = [
    b"#define CHECK(x) do { x; cudaError_t e = cudaGetLastError(); } while (0)\nint f(int);\n",
    b"static void sync_check() { cudaPeekAtLastError(); }\n#define N 4\n",
    b"#define WRAP(x) CHECK(x)\n#define  SPACED(a)  a\n",
    b"int api(int a, int b);\n#define VERSION 13\n#define EMPTY\n",  # no reader, no function-like macro
    b"#define OBJECT (x)\nvoid g() { cudaDeviceSynchronize(); }\n",
]


@pytest.mark.parametrize("data", HEADERS)
def test_header_checks_equal_the_parsed_headers(data):
    assert callers.header_checks(data) == callers.error_checks(parse_tree(data))


def _lane_stride_rows(index, active):
    strides = set()
    for row, m in zip(index, active):
        v = row[m]
        if len(v) > 1:
            strides.update(np.unique(np.diff(v)).tolist())
    return strides.pop() if len(strides) == 1 else None


def test_lane_stride_equals_the_row_by_row_reading():
    rng = np.random.default_rng(29)
    found = 0
    for _ in range(2000):
        rows = int(rng.integers(1, 5))
        base = np.arange(rows * 32).reshape(rows, 32) // int(rng.integers(1, 3))
        index = base * int(rng.integers(-3, 4)) + rng.integers(0, 2, size=(rows, 32)) * int(rng.integers(0, 2))
        active = rng.random((rows, 32)) < rng.choice([0.05, 0.6, 1.0])
        got = M.lane_stride(index, active)
        assert got == _lane_stride_rows(index, active) and type(got) is type(_lane_stride_rows(index, active))
        found += got is not None
    assert found > 100  # both outcomes were exercised
    floats = np.array([[0.0, 1.0, np.nan, 3.0]])
    assert M.lane_stride(floats, np.ones_like(floats, dtype=bool)) is _lane_stride_rows(floats, np.ones((1, 4), bool))
