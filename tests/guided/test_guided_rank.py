from _guided_synth import access, kernel, metrics, report

from cudalens.findings import Evidence, Finding, Layer, Priority
from cudalens.guided.inputs import Measurement
from cudalens.guided.rank import LATENCY_BOUND_UTILIZATION, first_steps, kernel_loads, rank_findings
from cudalens.measure.throughput import Ceilings

CEIL = Ceilings(theoretical_bandwidth_gbs=3000.0, theoretical_gflops=60000.0)


def _f(rule, kernel_name, line, impact, priority=Priority.HIGH, fix="do the thing", file="k.cu", status="flagged"):
    return Finding(rule=rule, priority=priority, section="s", kernel=kernel_name, file=file, line=line,
                   message=f"{rule} at {line}", fix=fix, impact=impact, impact_text="static",
                   evidence=(Evidence(Layer.MODEL, "x", 1),), status=status)


def _rep():
    return report(kernel("a", [access(10, "global", "load", sectors=8.0, ideal=4.0)]),
                  kernel("b", [access(20, "global", "store", sectors=8.0, ideal=4.0)]))


def test_measured_impact_reorders_memory_findings_by_waste_times_time_share():
    rep = _rep()
    fa, fb = _f("G1", "a", 10, 0.25), _f("G3", "b", 20, 0.5)
    # static order: b's larger static impact first
    assert [f.kernel for f in rank_findings([fa, fb])] == ["b", "a"]
    meas = [Measurement("a", 3e-3), Measurement("b", 1e-3)]
    counters = {"a": metrics("a", gld_efficiency=50.0), "b": metrics("b", gst_efficiency=25.0)}
    loads = kernel_loads(rep, counters, meas, CEIL)
    share_a, share_b = 3e-3 / 4e-3, 1e-3 / 4e-3
    assert abs(loads["a"].time_share - share_a) < 1e-12
    ranked = rank_findings([fa, fb], loads, rep)
    expect_a, expect_b = (1 - 0.50) * share_a, (1 - 0.25) * share_b
    assert [f.kernel for f in ranked] == (["a", "b"] if expect_a > expect_b else ["b", "a"])
    impacts = {f.kernel: f.impact for f in ranked}
    assert abs(impacts["a"] - expect_a) < 1e-12 and abs(impacts["b"] - expect_b) < 1e-12
    assert all(any(e.fact == "time_share" for e in f.evidence) for f in ranked)


def test_without_counters_the_static_waste_is_scaled_by_time_share():
    rep = _rep()
    fa, fb = _f("G1", "a", 10, 0.25), _f("G8", "b", 20, 0.5)
    loads = kernel_loads(rep, {}, [Measurement("a", 9e-3), Measurement("b", 1e-3)], CEIL)
    ranked = rank_findings([fa, fb], loads, rep)
    assert [round(f.impact, 12) for f in ranked] == [round(0.25 * 0.9, 12), round(0.5 * 0.1, 12)]


def test_priority_dominates_and_measured_impacts_come_before_static_ones():
    rep = _rep()
    medium = _f("SH2", "a", 10, 0.9, priority=Priority.MEDIUM)
    high_unmeasured = _f("G1", "c", 5, 0.9)  # kernel c has no time
    high_measured = _f("G1", "a", 10, 0.1)
    loads = kernel_loads(rep, {}, [Measurement("a", 1e-3)], CEIL)
    ranked = rank_findings([medium, high_unmeasured, high_measured], loads, rep)
    assert [(f.rule, f.kernel) for f in ranked] == [("G1", "a"), ("G1", "c"), ("SH2", "a")]
    assert ranked[1].impact == 0.9  # unchanged static impact


def test_occupancy_findings_count_only_where_latency_bound():
    rep = report(kernel("lat"), kernel("bw"))
    low = LATENCY_BOUND_UTILIZATION / 2
    counters = {
        "lat": metrics("lat", duration_s=1e-3, achieved_occupancy=0.25, dram_bandwidth_gbps=3000.0 * low,
                       flops=60000e9 * low * 1e-3),
        "bw": metrics("bw", duration_s=1e-3, achieved_occupancy=0.25, dram_bandwidth_gbps=3000.0 * 0.9, flops=0.0),
    }
    loads = kernel_loads(rep, counters, (), CEIL)
    assert loads["lat"].latency_bound is True and loads["bw"].latency_bound is False
    assert abs(loads["lat"].compute_utilization - low) < 1e-9
    ranked = rank_findings([_f("E1", "bw", 1, 0.5), _f("E1", "lat", 1, 0.1)], loads, rep)
    assert [f.kernel for f in ranked] == ["lat", "bw"]
    assert abs(ranked[0].impact - (1 - 0.25) * 0.5) < 1e-12 and ranked[1].impact == 0.0


def test_other_rules_keep_their_static_impact():
    rep = _rep()
    f = _f("D1", "a", 10, 0.7)
    loads = kernel_loads(rep, {}, [Measurement("a", 1e-3)], CEIL)
    assert rank_findings([f], loads, rep) == [f]


def test_first_steps_name_rule_place_and_fix_and_skip_validation():
    fs = [_f("V1", "a", 3, None, priority=Priority.HIGH, fix="doubt"),
          _f("G3", "a", 5, 0.5, fix="let threadIdx.x index the contiguous dimension"),
          _f("G3", "a", 7, 0.5, fix="let threadIdx.x index the contiguous dimension"),
          _f("D1", "a", 4, 1.0, fix="make the condition uniform per warp."),
          _f("E6", None, None, None, fix="add launch bounds", file="h.cu"),
          _f("E1", "b", 9, 0.2, fix="use larger blocks")]
    steps = first_steps(fs)
    assert len(steps) == 3
    assert steps[0] == "Let threadIdx.x index the contiguous dimension (G3: kernel `a`, k.cu lines 5, 7)."
    assert steps[1] == "Make the condition uniform per warp (D1: kernel `a`, k.cu:4)."
    assert steps[2] == "Add launch bounds (E6: h.cu)."
    assert len(first_steps(fs, n=1)) == 1
    assert all("doubt" not in s.lower() for s in first_steps(fs, n=10))
