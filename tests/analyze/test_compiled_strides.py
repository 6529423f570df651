"""The compiled figures' lane stride (evidence.compiled_figures.fill_access): a global access with
excess sectors whose neighbouring lanes keep one stride of more than an element in every parameter
trial is ``strided-k`` (G3's case); anything else keeps the pattern its figures give (G1's)."""

from __future__ import annotations

from cudalens.evidence.compiled_figures import LineFigure, fill_access
from cudalens.source.model import Access

QUANTITY = "global store sectors/request"


def _fill(fig: LineFigure, bytes_per_thread: int | None = 4) -> Access:
    a = Access(line=4, array="out", space="global", op="store", bytes_per_thread=bytes_per_thread, index="x * h + y",
               pattern="parameter-dependent")
    return fill_access(a, {(4, QUANTITY): fig})


def test_one_stride_in_every_trial_is_strided_and_named_by_its_parameter():
    fig = LineFigure(32.0, 4.0, "the same for param 1 = 256, 1000, 4096", 1024, (1024, 4000, 16384),
                     tried=(256, 1000, 4096), params=(1,))
    a = fill_access(Access(line=4, array="out", space="global", op="store", bytes_per_thread=4, index="x * h",
                           pattern="parameter-dependent"), {(4, QUANTITY): fig}, ("out", "h"))
    assert (a.pattern, a.figures_from) == ("strided-by-parameter", "compiled-ptx")
    assert a.lane_stride == 256  # the least of the trials (SH3's threshold reads it), never printed as the stride
    assert a.lane_stride_text == "= h elements (h = 256..4096 tried)"
    assert "the same for h = 256, 1000, 4096" in a.assumptions[-2]
    # a stride that does not follow the parameter in proportion: its span over the trials
    fig = LineFigure(32.0, 4.0, "", 1028, (1028, 4004, 16388), tried=(256, 1000, 4096), params=(1,))
    a = fill_access(Access(line=4, array="out", space="global", op="store", bytes_per_thread=4, index="x * (h + 1)",
                           pattern="parameter-dependent"), {(4, QUANTITY): fig}, ("out", "h"))
    assert a.lane_stride_text == "depending on h: 257..4097 elements over the trials (h = 256..4096 tried)"


def test_the_same_stride_in_every_trial_says_so_plainly():
    a = _fill(LineFigure(8.0, 4.0, "", 8, (8, 8, 8)))
    assert (a.pattern, a.lane_stride) == ("strided-2", 2)
    assert a.assumptions[-1] == "lane stride 2 elements in the compiled code"


def test_no_single_stride_keeps_the_figures_pattern():
    assert _fill(LineFigure(32.0, 4.0, "", None, (None, None, None))).pattern == "uncoalesced"
    # one trial without a stride (lanes scattered there): not strided
    assert _fill(LineFigure(32.0, 4.0, "", 1024, (1024, None, 16384))).pattern == "uncoalesced"


def test_unit_stride_with_excess_is_misalignment_not_a_stride():
    a = _fill(LineFigure(5.0, 4.0, "", 4, (4, 4, 4)))
    assert a.pattern == "misaligned" and a.lane_stride is None


def test_an_element_of_unknown_size_is_not_called_strided():
    # curandState states[tid] (48-byte structs) read in 8-byte pieces: lanes 48 bytes apart, which is
    # one element of the array, not six
    a = _fill(LineFigure(32.0, 7.2, "", 48, (48,), 8), bytes_per_thread=None)
    assert a.pattern == "uncoalesced" and a.lane_stride is None


def test_the_sources_stride_in_elements_sizes_an_element_it_cannot_name():
    # uint d_Src[1023 + 1024 * pos] (a typedef the front end does not size): the source says 1024
    # elements between lanes, the compiled code 4096 bytes: 4-byte elements, strided
    a = Access(line=4, array="d_Src", space="global", op="load", bytes_per_thread=None, index="1023 + 1024 * pos",
               pattern="unknown-width", lane_stride=1024)
    filled = fill_access(a, {(4, "global load sectors/request"): LineFigure(32.0, 4.0, "", 4096, (4096,), 4)})
    assert (filled.pattern, filled.lane_stride) == ("strided-1024", 1024)
    # states[tid]: one element between lanes in the source; the 48 bytes are the struct, not a stride
    b = Access(line=4, array="states", space="global", op="load", bytes_per_thread=None, index="tid",
               pattern="unknown-width", lane_stride=1)
    assert fill_access(b, {(4, "global load sectors/request"): LineFigure(32.0, 7.2, "", 48, (48,), 8)}).pattern \
        == "uncoalesced"


def test_a_struct_copied_in_pieces_is_not_strided():
    # a 32-byte struct per lane copied as two 16-byte accesses on one line: lanes 32 bytes apart, and
    # the line's instructions move 32 bytes per lane together: every fetched byte is used
    a = _fill(LineFigure(32.0, 16.0, "", 32, (32,), 32), bytes_per_thread=16)
    assert a.pattern == "uncoalesced" and a.lane_stride is None
    # the same stride with one 4-byte access per lane is strided
    assert _fill(LineFigure(32.0, 4.0, "", 32, (32,), 4)).pattern == "strided-8"
