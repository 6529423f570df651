"""The compiled figures' lane stride (pipeline.compiled_figures.fill_access): a global access with
excess sectors whose neighbouring lanes keep one stride of more than an element in every parameter
trial is ``strided-k`` (G3's case); anything else keeps the pattern its figures give (G1's)."""

from __future__ import annotations

from cudalens.pipeline.compiled_figures import LineFigure, fill_access
from cudalens.source.model import Access

QUANTITY = "global store sectors/request"


def _fill(fig: LineFigure, bytes_per_thread: int | None = 4) -> Access:
    a = Access(line=4, array="out", space="global", op="store", bytes_per_thread=bytes_per_thread, index="x * h + y",
               pattern="parameter-dependent")
    return fill_access(a, {(4, QUANTITY): fig})


def test_one_stride_in_every_trial_is_strided():
    a = _fill(LineFigure(32.0, 4.0, "", 4, 1024, (1024, 4000, 16384)))
    assert (a.pattern, a.lane_stride, a.figures_from) == ("strided-256", 256, "compiled-ptx")
    assert "lane stride 256, 1000, 4096 elements" in a.assumptions[-1]


def test_the_same_stride_in_every_trial_says_so_plainly():
    a = _fill(LineFigure(8.0, 4.0, "", 4, 8, (8, 8, 8)))
    assert (a.pattern, a.lane_stride) == ("strided-2", 2)
    assert a.assumptions[-1] == "lane stride 2 elements in the compiled code"


def test_no_single_stride_keeps_the_figures_pattern():
    assert _fill(LineFigure(32.0, 4.0, "", 4, None, (None, None, None))).pattern == "uncoalesced"
    # one trial without a stride (lanes scattered there): not strided
    assert _fill(LineFigure(32.0, 4.0, "", 4, 1024, (1024, None, 16384))).pattern == "uncoalesced"


def test_unit_stride_with_excess_is_misalignment_not_a_stride():
    a = _fill(LineFigure(5.0, 4.0, "", 4, 4, (4, 4, 4)))
    assert a.pattern == "misaligned" and a.lane_stride is None


def test_the_element_width_comes_from_the_code_when_the_source_has_none():
    a = _fill(LineFigure(32.0, 8.0, "", 8, 512, (512,)), bytes_per_thread=None)  # a template T of 8 bytes
    assert (a.pattern, a.lane_stride) == ("strided-64", 64)
