"""How a prediction is set against a measured line (cudalens.profile.ncu_source.check_lines):
shared lines compare the model's N-way, a range agrees when the measured value lies in it (each end
widened by the cross-check tolerance), and a measured line with no PTX instruction of its class is
compared with the one inlined helper line called from it whose own line has no SASS of the class."""

from __future__ import annotations

from cudalens.access.ptx_eval import LinePrediction
from cudalens.profile.ncu_source import LineCounter, check_lines


def _counter(line: int, space: str, op: str, value: float, file: str = "k.cu") -> LineCounter:
    glob = space == "global"
    return LineCounter("k", file, line, space, op, executed=64.0, instructions=1,
                       sectors_per_request=value if glob else None, ideal_sectors_per_request=4.0 if glob else None,
                       nway=None if glob else value, threads=32.0)


def _pred(line: int, quantity: str, file: str = "k.cu", **kw) -> LinePrediction:
    return LinePrediction(kernel="k", file=file, line=line, quantity=quantity, **kw)


def test_shared_lines_compare_the_nway_not_the_mean_wavefronts():
    counters = {("k", "k.cu", 10, "shared", "load"): _counter(10, "shared", "load", 1.0)}
    (c,) = check_lines([_pred(10, "shared load wavefronts/request", value=1.8333, nway=1.0)], counters, "k")
    assert (c.predicted, c.measured, c.agree) == (1.0, 1.0, True)


def test_a_range_agrees_only_when_the_measurement_lies_in_it():
    p = _pred(5, "global load sectors/request", value=None, low=1.0, high=32.0, reason="data-dependent: a range")
    inside = {("k", "k.cu", 5, "global", "load"): _counter(5, "global", "load", 4.0)}
    (c,) = check_lines([p], inside, "k")
    assert c.predicted is None and (c.low, c.high, c.agree) == (1.0, 32.0, True)
    q = _pred(5, "global load sectors/request", value=None, low=8.0, high=16.0)
    (d,) = check_lines([q], inside, "k")
    assert d.agree is False  # 4 < 8 - max(0.8, 0.5)
    (e,) = check_lines([_pred(5, "global load sectors/request", value=None, low=4.4, high=16.0)], inside, "k")
    assert e.agree is True  # 4.0 >= 4.4 - 0.5: the tolerance at the low end


def test_a_helper_access_placed_at_its_call_is_compared_there():
    helper = _pred(475, "global load sectors/request", file="h.cuh", value=4.0, call_sites=(("k.cu", 216),))
    counters = {("k", "k.cu", 216, "global", "load"): _counter(216, "global", "load", 4.0)}
    (c,) = check_lines([helper], counters, "k")
    assert (c.predicted, c.agree) == (4.0, True) and c.reason.startswith("attributed through the inlining chain")
    # two helper lines called from the same line: no unique attribution, the null says why
    other = _pred(476, "global load sectors/request", file="h.cuh", value=8.0, call_sites=(("k.cu", 216),))
    (d,) = check_lines([helper, other], counters, "k")
    assert d.predicted is None and d.reason.startswith("not a data dependence: no PTX instruction")
