from _guided_synth import access, kernel, metrics, report

from cudalens.findings import Layer, Priority
from cudalens.guided.crosscheck import cross_check, disagreement_findings
from cudalens.pipeline import analyze
from cudalens.quantities import BRANCH_EFFICIENCY, RATIO

BRANCH_UNIFORM_PCT = BRANCH_EFFICIENCY.tolerance.threshold


def _by(checks, kernel_name, quantity):
    found = [c for c in checks if c.kernel == kernel_name and c.quantity == quantity]
    assert len(found) == 1, (kernel_name, quantity, checks)
    return found[0]


def test_ratio_tolerance_is_the_larger_of_relative_and_absolute():
    for predicted in (1.0, 4.0, 32.0):
        tol = max(RATIO.relative * predicted, RATIO.absolute)
        assert RATIO.agrees(predicted, predicted + tol * 0.99)
        assert RATIO.agrees(predicted, predicted - tol * 0.99)
        assert not RATIO.agrees(predicted, predicted + tol * 1.01)


def test_global_sectors_agree_disagree_and_not_comparable():
    rep = report(
        kernel("same", [access(3, "global", "load", sectors=4.0, ideal=4.0),
                        access(4, "global", "load", sectors=4.0, ideal=4.0),
                        access(5, "global", "store", sectors=32.0, ideal=4.0)]),
        kernel("mixed", [access(3, "global", "load", sectors=4.0), access(4, "global", "load", sectors=32.0),
                         access(6, "global", "store", sectors=None, pattern="data-dependent")]),
    )
    counters = {"same": metrics("same", global_ld_sectors_per_request=4.2, global_st_sectors_per_request=4.0),
                "mixed": metrics("mixed", global_ld_sectors_per_request=18.0, global_st_sectors_per_request=4.0)}
    checks = cross_check(rep, counters)
    ld = _by(checks, "same", "global load sectors/request")
    assert (ld.predicted, ld.measured, ld.agree) == (4.0, 4.2, True)
    assert ld.line is None  # two accesses share the prediction
    st = _by(checks, "same", "global store sectors/request")
    assert (st.predicted, st.measured, st.agree, st.line) == (32.0, 4.0, False, 5)
    mixed = _by(checks, "mixed", "global load sectors/request")
    assert mixed.agree is None and mixed.predicted is None and "differ" in mixed.reason
    unmodelled = _by(checks, "mixed", "global store sectors/request")
    assert unmodelled.agree is None and "data-dependent" in unmodelled.reason


def test_shared_wavefronts_use_the_model_wavefronts_and_only_derive_them_for_4_byte_words():
    rep = report(kernel("s", [access(7, "shared", "load", ways=32.0, waves=32.0),
                              access(8, "shared", "store", ways=1.0, waves=None, width=8)]))
    checks = cross_check(rep, {"s": metrics("s", shared_ld_wavefronts_per_request=31.0,
                                            shared_st_wavefronts_per_request=1.0)})
    ld = _by(checks, "s", "shared load wavefronts/request")
    assert (ld.predicted, ld.agree, ld.line) == (32.0, True, 7)
    # an old report's 8-byte store with ways only: its wavefronts are not established
    st = _by(checks, "s", "shared store wavefronts/request")
    assert st.predicted is None and st.agree is None
    # 4-byte words: one warp per pass, so ways are wavefronts
    rep4 = report(kernel("s", [access(8, "shared", "store", ways=2.0, waves=None, width=4)]))
    st4 = _by(cross_check(rep4, {"s": metrics("s", shared_st_wavefronts_per_request=2.0)}), "s",
              "shared store wavefronts/request")
    assert (st4.predicted, st4.agree) == (2.0, True)


def test_branch_efficiency_expectations():
    counters = {n: metrics(n, branch_efficiency=eff) for n, eff in
                (("div", 60.0), ("div_uniform_hw", 100.0), ("uni", 99.9), ("uni_bad", 70.0), ("unk", 50.0))}
    rep = report(
        kernel("div", branches=[{"line": 4, "divergent": True}, {"line": 9, "divergent": False}]),
        kernel("div_uniform_hw", branches=[{"line": 4, "divergent": True}]),
        kernel("uni", branches=[{"line": 4, "divergent": False}]),
        kernel("uni_bad", branches=[]),
        kernel("unk", branches=[{"line": 5, "divergent": None}]),
    )
    checks = cross_check(rep, counters)
    div = _by(checks, "div", "branch efficiency")
    assert div.agree is (60.0 < BRANCH_UNIFORM_PCT) and div.line == 4 and div.relation == "<"
    assert _by(checks, "div_uniform_hw", "branch efficiency").agree is False
    assert _by(checks, "uni", "branch efficiency").agree is True
    assert _by(checks, "uni_bad", "branch efficiency").agree is False
    unk = _by(checks, "unk", "branch efficiency")
    assert unk.agree is None and "line 5" in unk.reason


def test_theoretical_occupancy_within_one_point():
    rep = report(kernel("a", occupancy=0.5), kernel("b", occupancy=0.75), kernel("c"))
    checks = cross_check(rep, {"a": metrics("a", theoretical_occupancy=0.505),
                               "b": metrics("b", theoretical_occupancy=0.5),
                               "c": metrics("c", theoretical_occupancy=0.5)})
    a = _by(checks, "a", "theoretical occupancy")
    assert a.agree is True and a.predicted == 50.0 and abs(a.measured - 50.5) < 1e-9
    assert _by(checks, "b", "theoretical occupancy").agree is False
    assert not [c for c in checks if c.kernel == "c" and c.quantity == "theoretical occupancy"]


def test_kernels_without_counters_are_skipped():
    rep = report(kernel("x", [access(1, "global", "load", sectors=4.0)]))
    assert cross_check(rep, {}) == []
    assert cross_check(rep, {"other": metrics("other", global_ld_sectors_per_request=4.0)}) == []


def test_real_model_on_the_transpose_example_matches_the_hardware_facts():
    """The naive tile transpose reads shared memory with a 32-way conflict, the padded one without."""
    rep = [rec for fa in analyze(["examples/access/transpose.cu"], compile=False).files for rec in fa.kernels]
    names = {r.name for r in rep}
    assert {"transpose_tile", "transpose_tile_padded"} <= names
    hardware = {"transpose_tile": metrics("transpose_tile", shared_ld_wavefronts_per_request=32.0,
                                          shared_st_wavefronts_per_request=1.0, global_ld_sectors_per_request=4.0),
                "transpose_tile_padded": metrics("transpose_tile_padded", shared_ld_wavefronts_per_request=1.0,
                                                 shared_st_wavefronts_per_request=1.0,
                                                 global_ld_sectors_per_request=4.0)}
    checks = cross_check(rep, hardware)
    compared = [c for c in checks if c.agree is not None and "wavefronts" in c.quantity]
    assert len(compared) == 4 and all(c.agree for c in compared)
    # swap the counters: now the model must disagree on both shared loads
    swapped = {"transpose_tile": hardware["transpose_tile_padded"], "transpose_tile_padded": hardware["transpose_tile"]}
    swapped_checks = [c for c in cross_check(rep, swapped) if c.quantity == "shared load wavefronts/request"]
    assert [c.agree for c in swapped_checks] == [False, False]


def test_each_disagreement_becomes_a_v1_finding_with_both_layers():
    rep = report(kernel("k", [access(5, "global", "store", sectors=32.0)], occupancy=0.75, file="src/k.cu"))
    checks = cross_check(rep, {"k": metrics("k", global_st_sectors_per_request=4.0, theoretical_occupancy=0.5,
                                            branch_efficiency=100.0)})
    wrong = [c for c in checks if c.agree is False]
    found = disagreement_findings(checks)
    assert len(found) == len(wrong) == 2
    for f, c in zip(found, wrong):
        assert f.rule == "V1" and f.priority is Priority.INFO and f.section == "cudalens validation"
        assert (f.kernel, f.file, f.line) == ("k", "src/k.cu", c.line)
        assert {e.layer for e in f.evidence} == {Layer.MODEL, Layer.PROFILER}
        assert c.quantity in f.message and f"{c.measured:g}" in f.message
