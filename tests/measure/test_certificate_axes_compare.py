"""Certificate keys and checks, the axis grammar and grid, compare on result files: no GPU."""

import json

import pytest

from cudalens.cli import main
from cudalens.errors import InputError
from cudalens.hardware.device import DeviceFacts
from cudalens.measure import axes as ax
from cudalens.measure.certificate import CERTIFICATE_KEYS, build_certificate, compare_outputs, speed_of_light
from cudalens.measure.comparison import compare_results, load_results
from cudalens.measure.result import BenchResult
from cudalens.measure.sampling import FixedSamples, NoiseTarget, Sample, SamplingPolicy, collect
from cudalens.measure.stats import summarize
from cudalens.measure.timers import TIMERS, GraphTimer, RawEventTimer, Timer, make_timer

from ._factory import fake_result

DEV = DeviceFacts(name="Fake H100", cc="9.0", l2_bytes=50 << 20, theoretical_bandwidth_gbs=3352.3,
                 driver_version="580.159.04", cuda_version="13.0", max_sm_clock_mhz=1980.0)
ENGINE = {"event_floor_s": 1.3e-6, "timer": Timer().describe(), "flush_bytes": 100 << 20, "persisting_reset": True,
          "windows_seen": [], "windows_seen_count": 0, "side_work_checked": True, "graph": False,
          "clocks": [{"sm_mhz": 1980.0, "mem_mhz": 2619.0, "throttle_reasons": []},
                     {"sm_mhz": 1755.0, "mem_mhz": 2619.0, "throttle_reasons": ["SwPowerCap"]}],
          "criterion": NoiseTarget(SamplingPolicy()).describe()}


def _samples(n=30, sec=1e-4, **kw):
    return tuple(Sample(sec, 1, 1980.0, **kw) for _ in range(n))


def test_certificate_has_every_key_and_a_trusted_verdict_for_an_honest_run():
    samples = _samples()
    cert = build_certificate(mode="cold", engine=ENGINE, samples=samples, stop="converged",
                             summary=summarize([s.seconds for s in samples]), device=DEV,
                             toolchain={"compiler": "nvrtc 13.0"}, outputs_before={"checked": True, "ok": True},
                             outputs_after={"checked": True, "ok": True},
                             sol=speed_of_light(1e-4, 200_000_000, 3352.3, mode="cold"))
    assert set(CERTIFICATE_KEYS) <= set(cert)
    assert cert["verdict"] == "trusted" and cert["reasons"] == []
    assert cert["clocks"]["sm_mhz_first"] == 1980.0 and cert["clocks"]["sm_mhz_last"] == 1755.0
    assert cert["throttle_reasons"]["last"] == ["SwPowerCap"]
    assert cert["flush"] == {"bytes": 100 << 20, "persisting_reset": True, "access_policy_window_reset": True}
    assert cert["samples"]["taken"] == 30 and cert["driver"]["driver_version"] == "580.159.04"
    assert {"outputs_before", "outputs_after", "speed_of_light", "side_work", "other_devices", "persisting_l2",
            "clocks"} == set(cert["checks"])
    assert cert["checks"]["other_devices"] == {"checked": False, "ok": True, "reason": "work on other devices not checked"}
    json.dumps(cert)  # serializable as it is


def test_each_adversarial_check_makes_the_result_suspect_with_its_reason():
    samples = _samples(10) + _samples(5, untrusted="other work ran 300 us past the stop event")
    engine = dict(ENGINE, windows_seen=[{"num_bytes": 1 << 24, "hit_ratio": 1.0}], windows_seen_count=40)
    after = compare_outputs({1: [float("nan")] * 4}, {1: [1.0, 2.0, 3.0, 4.0]}, 1e-5, 0, against="the first run's outputs")
    sol = speed_of_light(2e-6, 32 << 20, 3352.3, mode="cold")
    cert = build_certificate(mode="cold", engine=engine, samples=samples, stop="converged",
                             summary=summarize([1e-4] * 10), device=DEV, toolchain=None, outputs_before=None,
                             outputs_after=after, sol=sol)
    assert cert["verdict"] == "suspect"
    text = " ".join(cert["reasons"])
    assert "first run's outputs" in text and "4 of 4 wrong" in text
    assert "speed of light" in text and "access-policy window" in text and "5 samples saw work" in text
    assert cert["checks"]["outputs_before"] == {"checked": False, "ok": True}


def test_speed_of_light_explains_l2_residency_in_hot_mode():
    hot = speed_of_light(1e-6, 8 << 20, 3352.3, mode="hot", l2_bytes=50 << 20)
    assert not hot["ok"] and "fits in L2" in hot["reason"]
    assert hot["floor_s"] == pytest.approx((8 << 20) / 3352.3e9)
    assert speed_of_light(hot["floor_s"], 8 << 20, 3352.3, mode="cold")["ok"]  # at the floor: possible
    assert not speed_of_light(0.9 * hot["floor_s"], 8 << 20, 3352.3, mode="cold")["ok"]
    assert speed_of_light(1e-9, 0, 3352.3, mode="cold") == {"checked": False, "ok": True, "reason": "bytes or bandwidth unknown"}


def test_integer_outputs_compare_exactly():
    r = compare_outputs({0: [1, 2, 3]}, {0: [1, 2, 4]}, 1e-5, 1.0, against="the reference")
    assert not r["ok"] and r["arguments"]["0"]["mismatches"] == 1


def test_timers_and_criteria_are_objects():
    assert set(TIMERS) == {"auto", "cupti", "events", "events-raw", "graph"}
    assert make_timer("events").seconds(10e-6, 2, 1e-6) == (4.5e-6, "events")
    assert make_timer("events-raw").seconds(10e-6, 2, 1e-6) == (5e-6, "events-raw")
    assert isinstance(make_timer("graph"), GraphTimer) and make_timer("graph").graph
    custom = RawEventTimer()
    assert make_timer(custom) is custom
    with pytest.raises(InputError, match="timer 'nanoseconds'"):
        make_timer("nanoseconds")
    ticks = iter(range(1000))
    out = collect(lambda: Sample(1e-5 * (1 + next(ticks) % 7)), SamplingPolicy(warmup=0), lambda: 0.0,
                  criterion=FixedSamples(12))
    assert len(out.samples) == 12 and out.stop == "count"  # noisy samples: the noise target would never stop
    untrusted = iter([Sample(1.0, untrusted="side work")] * 3 + [Sample(1.0)] * 20)
    out = collect(lambda: next(untrusted), SamplingPolicy(warmup=0), lambda: 0.0, criterion=FixedSamples(5))
    assert len(out.samples) == 8 and len(out.kept_seconds) == 5  # untrusted samples do not count


def test_axis_grammar_lists_ranges_and_errors():
    assert ax.parse_axis("block=128,256,512") == ax.Axis("block", ("128", "256", "512"))
    assert ax.parse_axis("T=float,double").values == ("float", "double")
    assert ax.parse_axis("n=2^20:2^26:x4").values == tuple(str(2 ** k) for k in (20, 22, 24, 26))
    assert ax.parse_axis("s=0:64:+16").values == ("0", "16", "32", "48", "64")
    assert ax.parse_axis("s=1:10:4").values == ("1", "5", "9")
    assert ax.parse_axis("P=pair<int,float>,ns::T").values == ("pair<int,float>", "ns::T")
    for bad, msg in (("block", "NAME=V1"), ("9x=1", "NAME=V1"), ("n=1:2", "START:STOP:STEP"),
                     ("n=8:2:x2", "never reaches"), ("n=1:8:x1", "never reaches"), ("n=a:b:x2", "not an integer"),
                     ("n=1,,2", "empty value")):
        with pytest.raises(InputError, match=msg):
            ax.parse_axis(bad)
    with pytest.raises(InputError, match="given twice"):
        ax.parse_axes(["n=1,2", "n=3"])


def test_grid_substitution_and_launch_expressions():
    cells = ax.grid(ax.parse_axes(["block=128,256", "T=float,double", "n=2^20:2^22:x4"]))
    assert len(cells) == 2 * 2 * 2
    assert cells[0] == {"block": "128", "T": "float", "n": str(2 ** 20)}
    assert cells[-1] == {"block": "256", "T": "double", "n": str(2 ** 22)}
    c = cells[1]
    assert ax.substitute("ns::k<{T}, {block}>", c) == "ns::k<float, 128>"
    assert ax.dims_expr("{n}/{block}", c, "grid") == (2 ** 22 // 128, 1, 1)
    assert ax.dims_expr("1000/256, 2", {}, "grid") == (4, 2, 1)  # / rounds up
    with pytest.raises(InputError, match=r"\{B\} is not an axis"):
        ax.substitute("{B}", c, "--block")
    with pytest.raises(InputError, match="only integers"):
        ax.dims_expr("__import__('os')", {}, "grid")
    with pytest.raises(InputError, match="at most"):
        ax.grid(ax.parse_axes(["a=1:200:+1", "b=1:200:+1"]))


def test_sweep_rows_render_as_csv_and_markdown():
    r = fake_result(1e-4).to_dict()
    rows = [ax.row({"n": "1024"}, r), ax.row({"n": "2048"}, None, "kernel fault")]
    csv_text = ax.to_csv(rows)
    assert csv_text.splitlines()[0] == "n," + ",".join(ax.ROW_KEYS)
    assert "error: kernel fault" in csv_text
    md = ax.to_markdown(rows)
    assert md.splitlines()[1].startswith("|---") and "| 1024 | 100.0" in md


def _write(path, data):
    path.write_text(json.dumps(data))
    return str(path)


def test_compare_two_sweep_files_matches_cells_and_gives_verdicts(tmp_path, capsys):
    a = [dict(fake_result(100e-6, seed=i, kernel="k").to_dict(), cell={"n": str(n)}) for i, n in enumerate((1, 2, 3))]
    b = [dict(fake_result(t, seed=9 + i, kernel="k").to_dict(), cell={"n": str(n)})
         for i, (n, t) in enumerate(((1, 100e-6), (2, 120e-6), (4, 50e-6)))]
    fa, fb = _write(tmp_path / "a.json", a), _write(tmp_path / "b.json", b)
    res = compare_results(load_results(fa), load_results(fb), threshold=0.05)
    verdicts = {r["key"]: r["verdict"] for r in res["rows"]}
    assert verdicts == {"k[n=1]": "SAME", "k[n=2]": "SLOWER"}
    assert res["only_a"] == ["k[n=3]"] and res["only_b"] == ["k[n=4]"] and res["failed"]
    assert main(["compare", fa, fb, "--fail-if-slower", "5%"]) == 1
    out = capsys.readouterr().out
    assert "k[n=2]" in out and "SLOWER" in out and "only in A: k[n=3]" in out and "FAIL" in out
    assert main(["compare", fa, fb, "--fail-if-slower", "50%", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][1]["diff_pct"] == pytest.approx(20, abs=1)


def test_compare_single_result_files_and_bad_references(tmp_path, capsys):
    fa = _write(tmp_path / "a.json", fake_result(100e-6, seed=1).to_dict())
    fb = _write(tmp_path / "b.json", fake_result(90e-6, seed=2).to_dict())
    assert main(["compare", fa, fb, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "FASTER"
    assert main(["compare", fa, str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "neither a history run id nor a result file" in err[0]
    bad = _write(tmp_path / "bad.json", {"x": 1})
    assert main(["compare", fa, bad]) == 2
    assert "no cudalens results" in capsys.readouterr().err


def test_results_carry_the_certificate_through_json():
    r = fake_result(1e-4)
    d = r.to_dict()
    d["certificate"] = {"verdict": "suspect", "reasons": ["x"]}
    back = BenchResult.from_dict(d)
    assert back.suspect and back.certificate["reasons"] == ["x"]
    assert not fake_result(1e-4).suspect


def test_side_work_is_judged_over_the_run_not_one_sample():
    from cudalens.measure.sampling import side_work

    jitter = tuple(Sample(1e-4, other_work_s=(80e-6 if i in (3, 40) else 4e-6)) for i in range(100))
    same, info = side_work(jitter, threshold_s=20e-6)
    assert same == jitter and not info["found"] and info["long_waits"] == 2  # host jitter: ignored
    side = tuple(Sample(2e-6, other_work_s=(35e-6 if i % 3 else 4e-6)) for i in range(90))
    marked, info = side_work(side, threshold_s=20e-6)
    assert info["found"] and info["long_waits"] == 60
    assert sum(1 for s in marked if s.untrusted) == 60 and "still ran after the stop event" in marked[1].untrusted
    assert [s.seconds for s in marked if not s.untrusted] == [2e-6] * 30


def test_a_window_left_in_hot_mode_is_reported_not_removed():
    engine = dict(ENGINE, persisting_reset=False, window_checked=True, flush_bytes=0,
                  windows_seen=[{"num_bytes": 1 << 24, "hit_ratio": 1.0, "left_in_place": True}], windows_seen_count=1)
    samples = _samples()
    cert = build_certificate(mode="hot", engine=engine, samples=samples, stop="converged",
                             summary=summarize([s.seconds for s in samples]), device=DEV, toolchain=None,
                             outputs_before=None, outputs_after=None, sol=None)
    assert cert["verdict"] == "suspect" and "hot results include its persisting lines" in cert["reasons"][0]
    off = build_certificate(mode="hot", engine=dict(engine, window_checked=False), samples=samples, stop="converged",
                            summary=summarize([s.seconds for s in samples]), device=DEV, toolchain=None,
                            outputs_before=None, outputs_after=None, sol=None)
    assert off["verdict"] == "trusted" and not off["checks"]["persisting_l2"]["checked"]
