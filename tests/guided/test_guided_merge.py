import pytest
from _guided_synth import metrics

from cudalens.guided.inputs import Measurement
from cudalens.guided.merge import SECTOR_BYTES, merge_guided
from cudalens.measure.throughput import Ceilings
from cudalens.pipeline import analyze
from cudalens.profile.ncu import LaunchCounters

NEW_KEYS = {"counters", "cross_checks", "first_steps", "speed_of_light", "speed_of_light_details", "roofline"}


@pytest.fixture(scope="module")
def analysis():
    return analyze(["examples/access/divergence.cu"], compile=False)


@pytest.fixture(scope="module")
def report(analysis):
    return analysis.to_dict()


def merge(analysis, **kwargs):
    """merge_guided on the analysis's kernel records and findings."""
    return merge_guided([r for fa in analysis.files for r in fa.kernels], analysis.findings, **kwargs)


def _key(f):
    return (f["rule"], f["kernel"], f["file"], f["line"], f["message"])


def test_merge_gives_the_guided_keys_and_keeps_every_finding(analysis, report):
    counters = {"split_by_thread": metrics("split_by_thread", branch_efficiency=100.0, duration_s=1e-3,
                                           global_st_sectors_per_request=4.0, gst_efficiency=50.0),
                "split_by_warp": metrics("split_by_warp", branch_efficiency=100.0, duration_s=3e-3)}
    meas = Measurement("split_by_thread", 1e-3, bytes_read=0, bytes_written=4 * 2**20, flops=2**20)
    merged = merge(analysis, counters=counters, measurement=meas,
                   ceilings=Ceilings(theoretical_bandwidth_gbs=3000.0, theoretical_gflops=60000.0))
    assert set(merged) == NEW_KEYS | {"findings"}
    assert analysis.to_dict() == report  # the records and findings are not modified
    assert {_key(f) for f in report["findings"]} <= {_key(f) for f in merged["findings"]}
    # split_by_thread's divergent branch measured at 100 %: one V1 finding, the rest are the originals
    added = [f for f in merged["findings"] if _key(f) not in {_key(g) for g in report["findings"]}]
    assert [f["rule"] for f in added] == ["V1"] and added[0]["kernel"] == "split_by_thread"
    assert any(c["quantity"] == "branch efficiency" and c["agree"] is False for c in merged["cross_checks"])
    assert list(merged["findings"][0])[:8] == ["rule", "priority", "section", "kernel", "file", "line", "message", "fix"]
    # split_by_thread's stores leave gaps only where the branch idles lanes: that cost is D1's, not G3's (#16)
    assert not [f for f in merged["findings"] if f["rule"] == "G3" and f["kernel"] == "split_by_thread"]
    assert merged["counters"]["split_by_thread"]["gst_efficiency"] == 50.0
    assert len(merged["first_steps"]) == 3 and "(D1: kernel `split_by_thread`" in merged["first_steps"][0]
    assert merged["roofline"]["kernel"] == "split_by_thread" and merged["speed_of_light"]


def test_merge_without_anything_keeps_the_order_and_adds_empty_keys(analysis, report):
    merged = merge(analysis)
    assert [_key(f) for f in merged["findings"]] == [_key(f) for f in report["findings"]]
    assert merged["cross_checks"] == [] and merged["counters"] == {} and merged["roofline"] is None
    assert merged["speed_of_light"] == [] and len(merged["first_steps"]) == 3


def _launch(i, kernel, sectors, ns, eff):
    """One launch's global store counters: ``sectors`` in sectors/4 requests, ``ns`` nanoseconds."""
    return LaunchCounters(launch_id=i, kernel=f"{kernel}(float *)", block="(256, 1, 1)", grid="(64, 1, 1)",
                          metrics={"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": sectors,
                                   "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": sectors / 4,
                                   "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": eff,
                                   "gpu__time_duration.sum": ns})


def test_raw_launches_give_requested_and_actual_throughput(analysis):
    launches = [_launch(0, "split_by_warp", 1e6, 2e4, 50.0), _launch(1, "split_by_warp", 1e6, 1e4, 50.0),
                _launch(2, "split_by_warp", 1e6, 4e4, 50.0)]
    merged = merge(analysis, counters=launches)
    c = merged["counters"]["split_by_warp"]
    actual = 1e6 * SECTOR_BYTES / 2e-5 / 1e9  # the median launch (20 us)
    assert c["launches"] == 3 and c["gst_throughput_gbps"] == pytest.approx(actual)
    assert c["gst_requested_throughput_gbps"] == pytest.approx(actual * 0.5)
    assert c["gld_throughput_gbps"] is None
    check = next(x for x in merged["cross_checks"]
                 if x["kernel"] == "split_by_warp" and x["quantity"] == "global store sectors/request")
    assert check["measured"] == pytest.approx(4.0) and check["agree"] is True


def test_merged_report_renders_in_html(analysis, report):
    from cudalens.report.html import render_html

    merged = {**report, **merge(analysis, counters={"split_by_warp": metrics("split_by_warp", branch_efficiency=100.0)})}
    html = render_html(merged)
    assert "branch efficiency" in html and merged["first_steps"][0].split(" (")[0] in html
