"""The caches that keep a cold `check` from repeating work (issue #29) give what the work gave."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

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


def _checks_every_header_parsed(path, names, dirs):
    """Rule Y1's error checks as caller_facts found them before it skipped headers: every header parsed."""
    tree = parse_tree(open(path, "rb").read())
    funcs, macros = callers.error_checks(tree)
    seen, queue = set(), callers._headers(open(path, "rb").read(), str(path.parent), dirs)
    while queue:
        h = queue.pop(0)
        if h in seen:
            continue
        seen.add(h)
        data = open(h, "rb").read()
        f, m = callers.error_checks(parse_tree(data))
        funcs |= f
        macros |= m
        queue.extend(callers._headers(data, str(Path(h).parent), dirs))
    checks = set(callers.READERS) | funcs
    for _ in range(3):
        checks |= {n for n, body in macros if any(re.search(rf"\b{re.escape(c)}\b", body) for c in checks)}
    return frozenset(checks)


HEADERS = {
    "reader.h": "static inline void sync_check(const char *m) { if (cudaPeekAtLastError()) abort(); }\n",
    "chain.h": '#include "wrap.h"\n#define LAUNCH_OK(msg) WRAPPED(msg)\n#define OTHER(x) (x + 1)\n',
    "wrap.h": "#define WRAPPED(msg) sync_check(msg)\n#define  SPACED(a)  a\n",
    "plain.h": "int api(int a, int b);\n#define VERSION 13\n#define EMPTY\n#define F(x) api(x, x)\n",
    "deep.h": "#define DEEPER(m) LAUNCH_OK(m)\n#define DEEPEST(m) DEEPER(m)\n#define TOO_DEEP(m) DEEPEST(m)\n",
}


def test_caller_facts_reads_headers_only_where_they_can_name_a_check(tmp_path):
    for name, text in HEADERS.items():
        (tmp_path / name).write_text(text)
    cu = tmp_path / "main.cu"
    cu.write_text("".join(f'#include "{h}"\n' for h in HEADERS) + "__global__ void k() {}\n"
                  "void run() { k<<<1, 32>>>(); }\nint main() { run(); LAUNCH_OK(\"x\"); return 0; }\n")
    got = callers.caller_facts(str(cu), parse_tree(cu.read_bytes()), {"run"}).checks
    assert got == _checks_every_header_parsed(cu, {"run"}, ())
    assert {"sync_check", "WRAPPED", "LAUNCH_OK", "DEEPER"} <= got and not {"OTHER", "F", "DEEPEST"} & got  # 3 rounds


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


def test_main_is_no_launcher_whose_callers_are_looked_for(tmp_path):
    """A C++ program never calls main: a file whose only launching host function is main reads no sibling
    for its callers (each of them names main), and its unchecked launch is still reported."""
    from cudalens.pipeline.stages import _launchers_callers, analyze_file
    from cudalens.source.callers import CallerFacts
    from cudalens.source.parse import parse_file

    (tmp_path / "other.cu").write_text("int main() { return 0; }\n")
    cu = tmp_path / "a.cu"
    cu.write_text("__global__ void k() {}\nint main() { k<<<1, 32>>>(); return 0; }\n")
    assert type(_launchers_callers(str(cu), parse_file(str(cu)))) is CallerFacts
    cu2 = tmp_path / "b.cu"
    cu2.write_text("__global__ void k() {}\nvoid run() { k<<<1, 32>>>(); }\nint main() { run(); return 0; }\n")
    assert type(_launchers_callers(str(cu2), parse_file(str(cu2)))) is not CallerFacts  # run's callers: deferred
    fa = analyze_file(str(cu), compile=False)
    assert [f.line for f in fa.findings if f.rule == "Y1"] == [2]
