"""I6 defers to the specific rewrites (I3, I5, I8, I9, I10); it asks for their lines once per source."""

import dataclasses

from cudalens.rules import fast_math, instructions  # noqa: F401 - registers I3
from cudalens.rules.context import AnalysisContext
from cudalens.rules.registry import RULES
from cudalens.source.parse import parse_source

SRC = """
__global__ void k(float *o, const float *x) {
  int i = threadIdx.x;
  o[i] = 1.0f / sqrtf(x[i]) + sinf(x[i]);
}
"""


def test_rewrite_lines_are_computed_once_per_source_model(monkeypatch):
    calls = []
    spec = RULES["I3"]

    def counting(ctx):
        calls.append(ctx)
        return [f for check in spec.checks for f in check(ctx)]

    monkeypatch.setitem(RULES, "I3", dataclasses.replace(spec, checks=(counting,)))
    src = parse_source(SRC)
    first = fast_math.lines_with_specific_rewrites(AnalysisContext(source=src))
    again = fast_math.lines_with_specific_rewrites(AnalysisContext(source=src, cc="8.0"))
    assert first == again == {4} and len(calls) == 1
    fast_math.lines_with_specific_rewrites(AnalysisContext(source=parse_source(SRC)))  # a new model
    assert len(calls) == 2
