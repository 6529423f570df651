"""How a prediction is set against a measured line (cudalens.profile.ncu_source.check_lines):
shared lines compare the model's N-way, a range agrees when the measured value lies in it (each end
widened by the cross-check tolerance), and a measured line with no PTX instruction of its class is
compared with the PTX accesses of its class that ptxas placed there: the inlined helper lines called
from it that have no SASS of the class on their own line, else the accesses without SASS on their
own line (or without a line) when that is unambiguous."""

from __future__ import annotations

import dataclasses

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
    # two helper lines called from the same line, both without SASS of their own: ptxas placed both
    # there, so the line's figure is theirs averaged over their requests (3 x 4 + 1 x 8) / 4 = 5
    h3 = _pred(475, "global load sectors/request", file="h.cuh", value=4.0, requests=3, call_sites=(("k.cu", 216),))
    other = _pred(476, "global load sectors/request", file="h.cuh", value=8.0, requests=1, call_sites=(("k.cu", 216),))
    (d,) = check_lines([h3, other], counters, "k")
    assert (d.predicted, d.agree) == (5.0, False) and d.reason.startswith("attributed through the inlining chain")
    # a helper line that has SASS of its own is not a candidate: nothing to attribute, the null says so
    own = {**counters, ("k", "h.cuh", 475, "global", "load"): _counter(475, "global", "load", 4.0, file="h.cuh")}
    (e, f) = sorted(check_lines([h3], own, "k"), key=lambda c: c.line)
    assert f.line == 475 and e.predicted is None and e.reason.startswith("not a data dependence: no PTX instruction")


def test_accesses_without_a_line_are_compared_where_ptxas_put_them():
    # a struct copied per lane: the PTX loop has no line (.loc line 0), ptxas put its SASS on two lines
    copy = _pred(0, "global load sectors/request", value=32.0, requests=70)
    counters = {("k", "k.cu", 126, "global", "load"): _counter(126, "global", "load", 32.0),
                ("k", "k.cu", 130, "global", "load"): _counter(130, "global", "load", 32.0)}
    rows = check_lines([copy], counters, "k")
    assert [(c.line, c.predicted, c.agree) for c in rows] == [(126, 32.0, True), (130, 32.0, True)]
    assert all("which all give this figure" in c.reason for c in rows)
    # two lines without PTX and unplaced accesses that differ: which went where is unknown, so null
    other = _pred(0, "global load sectors/request", file="other.cu", value=4.0, requests=10)
    rows = check_lines([copy, other], counters, "k")
    assert all(c.predicted is None and c.reason.startswith("not a data dependence") for c in rows)
    # one line without PTX: every unplaced access must be there, averaged over requests
    (c,) = check_lines([copy, other], {k: v for k, v in counters.items() if k[2] == 126}, "k")
    assert c.predicted == round((32.0 * 70 + 4.0 * 10) / 80, 4) and c.reason.startswith("ptxas placed here the SASS")


def test_part_of_a_helper_placed_at_its_call_gives_the_range_of_its_instructions():
    # a sorting network's comparator: its loads have SASS on their own lines, and ptxas put some of
    # them at the call line as well; the call line's N-way lies between the instructions' N-ways
    helper = _pred(44, "shared load wavefronts/request", file="h.cuh", value=1.7, nway=1.5, requests=10,
                   call_sites=(("k.cu", 121),), site_bounds=(("k.cu", 121, 1.0, 4.0, 1.0, 4.0),))
    counters = {("k", "k.cu", 121, "shared", "load"): _counter(121, "shared", "load", 1.53),
                ("k", "h.cuh", 44, "shared", "load"): _counter(44, "shared", "load", 1.5, file="h.cuh")}
    call = next(c for c in check_lines([helper], counters, "k") if c.line == 121)
    assert call.predicted is None and (call.low, call.high, call.agree) == (1.0, 4.0, True)
    assert call.reason.startswith("ptxas placed part of the inlined code of h.cuh:44 here")
    outside = {**counters, ("k", "k.cu", 121, "shared", "load"): _counter(121, "shared", "load", 6.0)}
    assert next(c for c in check_lines([helper], outside, "k") if c.line == 121).agree is False


def test_a_helper_inlined_at_several_calls_gives_each_call_its_own_range():
    # the comparator inlined at two calls (lines 68 and 78): its figure averages both, so it is not
    # a candidate for either call as a whole; the part ptxas placed at one call lies between the
    # figures of that call's instructions (site_bounds), read through ``spread``
    helper = _pred(44, "shared load wavefronts/request", file="h.cuh", value=1.5, nway=1.5, requests=20,
                   call_sites=(("k.cu", 68), ("k.cu", 78)),
                   site_bounds=(("k.cu", 68, 1.0, 1.0, 1.0, 1.0), ("k.cu", 78, 2.0, 2.0, 2.0, 2.0)))
    counters = {("k", "k.cu", 68, "shared", "load"): _counter(68, "shared", "load", 1.0),
                ("k", "k.cu", 78, "shared", "load"): _counter(78, "shared", "load", 2.0)}
    without = check_lines([], counters, "k")
    assert all(c.predicted is None and c.low is None for c in without)
    rows = {c.line: c for c in check_lines([], counters, "k", spread=[helper])}
    assert (rows[68].low, rows[68].high, rows[68].agree) == (1.0, 1.0, True)
    assert (rows[78].low, rows[78].high, rows[78].agree) == (2.0, 2.0, True)
    far = {**counters, ("k", "k.cu", 68, "shared", "load"): _counter(68, "shared", "load", 3.0)}
    assert next(c for c in check_lines([], far, "k", spread=[helper]) if c.line == 68).agree is False


def test_part_of_a_data_dependent_helper_placed_at_its_call_keeps_its_range():
    # a comparator's swap runs under a branch on the loaded keys: its own figure is a range, and so
    # is the part ptxas placed at the call (its evaluated instructions alone would say 1..2)
    swap = _pred(46, "shared store wavefronts/request", file="h.cuh", value=None, low=0.0, high=1.6, nway_low=0.0,
                 nway_high=1.6, requests=10, reason="data-dependent: a range, as it runs under a branch (line 44)",
                 call_sites=(("k.cu", 132),), site_bounds=(("k.cu", 132, 1.0, 2.0, 1.0, 2.0),))
    counters = {("k", "k.cu", 132, "shared", "store"): _counter(132, "shared", "store", 0.0),
                ("k", "h.cuh", 46, "shared", "store"): _counter(46, "shared", "store", 0.8, file="h.cuh")}
    call = next(c for c in check_lines([swap], counters, "k") if c.line == 132)
    assert (call.low, call.high, call.agree) == (0.0, 2.0, True) and "data-dependent ranges" in call.reason


def test_a_ratio_to_the_ideal_of_a_helper_of_several_calls_comes_from_the_calls_instructions():
    # __stcs inlined at three calls: a predicated store (one lane) is compared as sectors over ideal
    # sectors. The helper's ideal averages its calls, so the ratio comes from the ratios of the
    # instructions inlined at that call (site_bounds' last two); without them there is no ratio
    def rows(bounds, measured=1.0):
        stcs = _pred(495, "global store sectors/request", file="sm_32_intrinsics.hpp", value=3.0, ideal=3.0,
                     requests=30, call_sites=(("k.cu", 204), ("k.cu", 216), ("k.cu", 226)), site_bounds=bounds)
        pred_store = LineCounter("k", "k.cu", 204, "global", "store", executed=64.0, instructions=1,
                                 sectors_per_request=0.5, ideal_sectors_per_request=0.5, nway=None, threads=0.5,
                                 predicated=True, sectors_per_ideal=measured)
        plain = _counter(226, "global", "store", 4.0)
        return {c.line: c for c in check_lines([], {("k", "k.cu", 204, "global", "store"): pred_store,
                                                     ("k", "k.cu", 226, "global", "store"): plain}, "k", spread=[stcs])}

    unknown = rows((("k.cu", 204, 1.0, 1.0, None, None), ("k.cu", 216, 1.0, 1.0, None, None),
                    ("k.cu", 226, 4.0, 4.0, None, None)))
    assert unknown[204].quantity.endswith("sectors/ideal") and unknown[204].predicted is None
    assert unknown[204].low is None and unknown[204].reason.startswith("no ratio to the ideal sectors")
    assert (unknown[226].low, unknown[226].high, unknown[226].agree) == (4.0, 4.0, True)
    ratios = (("k.cu", 204, 1.0, 1.0, None, None, 1.0, 1.0), ("k.cu", 216, 1.0, 1.0, None, None, 1.0, 1.0),
              ("k.cu", 226, 4.0, 4.0, None, None, 1.0, 1.0))
    known = rows(ratios)
    assert (known[204].low, known[204].high, known[204].agree) == (1.0, 1.0, True)
    assert "sectors over ideal sectors" in known[204].reason
    assert (known[226].low, known[226].high, known[226].agree) == (4.0, 4.0, True)  # per request as before
    assert rows(ratios, measured=2.0)[204].agree is False


def test_part_of_a_helper_whose_figure_varies_with_parameters_is_not_established():
    # the instructions' figures at the call are those of one parameter trial, not of the launch
    conv = _pred(112, "global load sectors/request", file="cuda_bf16.hpp", value=None, low=8.0, high=32.0,
                 requests=10, reason="varies with parameters nobody gave", call_sites=(("k.cu", 134),),
                 site_bounds=(("k.cu", 134, 11.3, 28.6, None, None),))
    counters = {("k", "k.cu", 134, "global", "load"): _counter(134, "global", "load", 32.0),
                ("k", "cuda_bf16.hpp", 112, "global", "load"): _counter(112, "global", "load", 20.0,
                                                                       file="cuda_bf16.hpp")}
    call = next(c for c in check_lines([conv], counters, "k") if c.line == 134)
    assert call.predicted is None and call.low is None and call.agree is None
    assert "varies with parameters nobody gave" in call.reason


def test_a_load_of_an_atomic_compare_and_swap_loop_says_so():
    # llm.c's atomicAdd(&shared_float[i], x) on the H100: LDS, FADD, ATOMS.CAST.SPIN, retry; the PTX
    # has only the atomic; with no figure for its addresses the load has none (rows in the shape of the real page)
    from cudalens.profile.ncu_source import line_counters, parse_source_csv

    header = '"Line No","Source","Address","Source","Instructions Executed","Address Space","L1 Conflicts Shared N-Way"'
    page = "\n".join(['"File Path","/p/k.cu"', '"Function Name","_Z1kPf"', header,
                      '"241","  atomicAdd(&s[i], x);","","","","",""',
                      '"","","0x0100","LDS R10, [R17]","4096","Shared","1"',
                      '"","","0x0110","FADD R11, R20, R10","4096","-","0"',
                      '"","","0x0120","ATOMS.CAST.SPIN R11, [R17], R10, R11","4096","Shared","2"',
                      '"242","  s[i] = 0;","","","","",""',
                      '"","","0x0130","LDS R12, [R18]","4096","Shared","1"'])
    counters = line_counters(parse_source_csv(page))
    assert counters[("_Z1kPf", "/p/k.cu", 241, "shared", "load")].atomic
    assert not counters[("_Z1kPf", "/p/k.cu", 242, "shared", "load")].atomic
    rows = {c.line: c for c in check_lines([], counters, "_Z1kPf")}
    assert "expanded an atomic" in rows[241].reason and rows[241].predicted is None
    assert rows[242].reason.startswith("not a data dependence: no PTX instruction")


def _cas_page(threads: str) -> str:
    # llm.c layernorm_backward_kernel4 on the H100: the loop over i (BRA back to 0x0410) holds the LDS
    # of line 419 and two ATOMG.E.CAS retry loops; contention splits the warps (2 lanes per execution)
    header = ('"Line No","Source","Address","Source","Instructions Executed","Address Space",'
              '"L1 Conflicts Shared N-Way","Avg. Predicated-On Threads Executed"')
    return "\n".join([
        '"File Path","/p/k.cu"', '"Function Name","_Z1kPf"', header,
        '"300","  x = s[0];","","","","","",""',
        '"","","0x0100","LDS R1, [R2]","4224","Shared","1","32"',
        '"419","  a = s[i*2];","","","","","",""',
        f'"","","0x0410","LDS.64 R14, [R2]","1385162","Shared","1","{threads}"',
        '"437","  old = atomicCAS(p, c, n);","","","","","",""',
        f'"","","0x0500","ATOMG.E.CAS.STRONG.GPU PT, R9, [R4], R8, R9","1385162","Global","0","{threads}"',
        '"441","  while (old != c) ...","","","","","",""',
        '"","","0x0580","@P0   BRA 0x0500","5405919","-","0","11"',
        '"418","  for (...)","","","","","",""',
        f'"","","0x06a0","@!P0  BRA 0x0410","1433284","-","0","{threads}"',
    ])


def test_a_line_in_a_loop_with_a_compare_and_swap_retry_run_by_few_lanes_is_null():
    from cudalens.profile.ncu_source import line_counters, parse_source_csv

    counters = line_counters(parse_source_csv(_cas_page("2")))
    assert counters[("_Z1kPf", "/p/k.cu", 419, "shared", "load")].cas_loop
    assert not counters[("_Z1kPf", "/p/k.cu", 300, "shared", "load")].cas_loop
    preds = [LinePrediction(kernel="_Z1kPf", file="/p/k.cu", line=ln, quantity="shared load wavefronts/request",
                            value=v, nway=v) for ln, v in ((419, 2.0), (300, 1.0))]
    rows = {c.line: c for c in check_lines(preds, counters, "_Z1kPf")}
    assert rows[419].predicted is None and rows[419].agree is None
    assert "compare-and-swap retry" in rows[419].reason and "2 of 32 lanes" in rows[419].reason
    assert rows[300].agree is True
    # the same loop run by full warps (no contention): the prediction is compared
    full = {c.line: c for c in check_lines(preds, line_counters(parse_source_csv(_cas_page("32"))), "_Z1kPf")}
    assert full[419].predicted == 2.0 and full[419].agree is False


def test_a_range_over_trials_whose_ideal_varies_compares_its_ratios_on_a_predicated_line():
    # pathfinder's load under a guard that only some parameter trials pass: sectors and ideal vary
    # with the trials (2 of 2, 1.5 of ... ), so a predicated line (measured as sectors over ideal)
    # compares the range of the trials' ratios; without them, no ratio
    kw = dict(value=None, low=2.0, high=4.0, ideal=None, requests=8, reason="reached only at some trial values")
    pred_load = LineCounter("k", "k.cu", 134, "global", "load", executed=64.0, instructions=1,
                            sectors_per_request=1.9, ideal_sectors_per_request=1.52, nway=None, threads=20.0,
                            predicated=True, sectors_per_ideal=1.25)
    counters = {("k", "k.cu", 134, "global", "load"): pred_load}
    row = check_lines([_pred(134, "global load sectors/request", ratio_range=(1.0, 1.3333), **kw)], counters, "k")[0]
    assert row.quantity.endswith("sectors/ideal") and (row.low, row.high, row.agree) == (1.0, 1.3333, True)
    assert check_lines([_pred(134, "global load sectors/request", **kw)], counters, "k")[0].low is None
    far = {("k", "k.cu", 134, "global", "load"): dataclasses.replace(pred_load, sectors_per_ideal=2.5)}
    assert check_lines([_pred(134, "global load sectors/request", ratio_range=(1.0, 1.3333), **kw)], far,
                       "k")[0].agree is False


def test_the_load_of_a_compare_and_swap_loop_is_compared_with_the_atomics_wavefronts():
    # atomicAdd(&dbias_shared[i], v) inlined from CUDA's header at two calls (lines 241 and 243): the
    # load ptxas puts in each call's compare-and-swap loop reads the atomic's addresses, all its lanes on
    # the first pass, a part of them on each retry: 1 .. the atomic's wavefronts at that call
    from cudalens.profile.ncu_cas import CAS_LOAD

    atomic = _pred(84, "shared atomic wavefronts/request", file="sm_20_atomic_functions.hpp", value=1.5, nway=1.5,
                   requests=20, call_sites=(("k.cu", 241), ("k.cu", 243)),
                   site_bounds=(("k.cu", 241, 1.0, 1.0, 1.0, 1.0, None, None), ("k.cu", 243, 2.0, 2.0, 2.0, 2.0, None, None)))

    def lds(line, value):
        return dataclasses.replace(_counter(line, "shared", "load", value), atomic=True)

    counters = {("k", "k.cu", 241, "shared", "load"): lds(241, 1.0), ("k", "k.cu", 243, "shared", "load"): lds(243, 1.6)}
    rows = {c.line: c for c in check_lines([], counters, "k", spread=[atomic])}
    assert (rows[241].low, rows[241].high, rows[241].agree) == (1.0, 1.0, True) and rows[241].reason == CAS_LOAD
    assert (rows[243].low, rows[243].high, rows[243].agree) == (1.0, 2.0, True)
    far = {**counters, ("k", "k.cu", 241, "shared", "load"): lds(241, 3.0)}
    assert next(c for c in check_lines([], far, "k", spread=[atomic]) if c.line == 241).agree is False
    unknown = dataclasses.replace(atomic, value=None, low=1.0, high=2.0, reason="data-dependent: a range")
    assert next(c for c in check_lines([], counters, "k", spread=[unknown]) if c.line == 241).low is None
