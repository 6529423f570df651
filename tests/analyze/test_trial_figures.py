"""Figures that vary with parameters nobody gave (evidence.compiled_figures._from_trials): reported
where the variation hides no finding (every full warp agrees, or every trial is a finding), never
otherwise; the trials' values are named with their parameter, never printed as the figure."""

from __future__ import annotations

from cudalens.access.ptx_eval import PLAUSIBLE, LinePrediction
from cudalens.evidence.compiled_figures import fill_access, line_figures
from cudalens.source.model import Access

Q = "global load sectors/request"
VARIES = "varies with parameters nobody gave"


def _pred(trials, strides=(128, 128, 128), condition="{'2': 256}: x; {'2': 1000}: y; {'2': 4096}: z"):
    vals = [v for v, _i, _t in trials]
    return LinePrediction(kernel="k", file="/k.cu", line=7, quantity=Q, value=None, low=min(vals), high=max(vals),
                          condition=condition, reason=VARIES, ideal=trials[0][1], lane_stride=strides[0],
                          lane_strides=strides, bytes_per_lane=4, trials=tuple(trials))


class _Eval:
    def __init__(self, *preds):
        self.predictions = preds
        self.kernel = "k"


def _access(**kw):
    return Access(line=7, array="in", space="global", op="load", bytes_per_thread=4, index="t * 32",
                  pattern="parameter-dependent", **kw)


def test_full_warps_agree_edge_warps_get_a_note():
    # a bounds guard: n = 256 and 1000 leave partial warps, n = 4096 full ones (32 sectors, ideal 4)
    p = _pred([(8.0, 1.0, 8.0), (31.0, 4.0, 31.0), (32.0, 4.0, 32.0)])
    fig = line_figures([_Eval(p)], "/k.cu")[(7, Q)]
    assert (fig.value, fig.ideal, fig.low, fig.edges) == (32.0, 4.0, None, ((256, 8.0, 1.0), (1000, 31.0, 4.0)))
    a = fill_access(_access(), {(7, Q): fig}, ("out", "in", "n"))
    assert (a.sectors_per_request, a.pattern, a.lane_stride) == (32.0, "strided-32", 32)
    assert a.figure_notes == ("in every full warp; edge warps (fewer than 32 active lanes) at n = 256, 1000 tried: "
                              "8, 31 against 1, 4",)


def test_full_warps_that_are_no_finding_give_nothing():
    p = _pred([(1.0, 1.0, 8.0), (4.0, 4.0, 31.0), (4.0, 4.0, 32.0)], strides=(4, 4, 4))
    assert line_figures([_Eval(p)], "/k.cu") == {}


def test_a_range_that_is_a_finding_at_each_value_is_kept_as_a_range():
    p = _pred([(16.0, 4.0, 32.0), (32.0, 4.0, 32.0), (32.0, 4.0, 32.0)], strides=(16, 60, 256))
    fig = line_figures([_Eval(p)], "/k.cu")[(7, Q)]
    assert (fig.low, fig.value, fig.ideal, fig.tried) == (16.0, 32.0, 4.0, PLAUSIBLE)
    a = fill_access(_access(), {(7, Q): fig}, ("out", "in", "n"))
    assert (a.sectors_low, a.sectors_per_request) == (16.0, 32.0)
    assert a.lane_stride_text == "depending on n: 4..64 elements over the trials (n = 256..4096 tried)"


def test_a_range_that_reaches_the_ideal_is_not_reported():
    p = _pred([(4.0, 4.0, 32.0), (31.6, 4.0, 32.0), (32.0, 4.0, 32.0)], strides=(4, 1000, 4096))
    assert line_figures([_Eval(p)], "/k.cu") == {}
    # full warps that disagree among themselves and a range over differing ideals: no figure either
    p = _pred([(16.0, 4.0, 32.0), (32.0, 8.0, 32.0), (32.0, 4.0, 31.0)])
    assert line_figures([_Eval(p)], "/k.cu") == {}


def test_a_range_over_loaded_values_is_left_alone():
    p = LinePrediction(kernel="k", file="/k.cu", line=7, quantity=Q, value=None, low=8.0, high=32.0,
                       reason="data-dependent: a range, with values loaded", ideal=4.0,
                       trials=((8.0, 4.0, 32.0), (32.0, 4.0, 32.0), (32.0, 4.0, 32.0)))
    assert line_figures([_Eval(p)], "/k.cu") == {}
