"""Issue #25 item 5: every timer says which quantity it measures; CUPTI is labelled as another one."""

from cudalens.measure.timers import TIMERS, make_timer


def test_every_timer_names_its_quantity():
    for name in TIMERS:
        d = make_timer(name).describe()
        assert d["quantity"] and "same_quantity_as_ncu_gpu_time_duration" in d


def test_cupti_is_not_presented_as_ncus_quantity():
    d = make_timer("cupti").describe()
    assert d["same_quantity_as_ncu_gpu_time_duration"] is False
    assert "different quantity" in d["quantity"]
    assert make_timer("events").describe()["same_quantity_as_ncu_gpu_time_duration"] is True


def test_stated_offsets_are_the_committed_measurements():
    """Each fit the certificate states is the one in the committed timer_vs_ncu results (>= 15 ncu
    samples per size, kernels of 2-20 us), recomputed here from the per-kernel medians."""
    import json
    from pathlib import Path

    import numpy as np

    from cudalens.measure.timer_ncu import FITS

    root = Path(__file__).resolve().parents[2]
    for (dev, timer), fit in FITS.items():
        doc = json.loads((root / fit["source"]).read_text())
        assert dev in doc["device"]
        rows = [r for r in doc["rows"] if r["ncu_median_s"] and r[f"{timer}_median_s"]]
        assert all(r["ncu_samples"] >= 15 for r in rows)
        assert min(r["ncu_median_s"] for r in rows) <= 3e-6 and max(r["ncu_median_s"] for r in rows) >= 15e-6
        pts = [(r["ncu_median_s"], r[f"{timer}_median_s"]) for r in rows if 3e-6 <= r["ncu_median_s"] <= 25e-6]
        x, y = np.array(pts).T
        slope, offset = np.polyfit(x, y, 1)
        assert abs(offset - fit["offset_s"]) < 0.01e-6 and abs(slope - fit["slope"]) < 0.002
        assert abs(np.median(y - x) - fit["median_difference_s"]) < 0.01e-6
        assert abs((y / x).min() - fit["ratio"][0]) < 0.002 and abs((y / x).max() - fit["ratio"][1]) < 0.002


def test_certificate_states_the_timer_against_ncu():
    from types import SimpleNamespace

    from cudalens.measure.certificate import build_certificate

    cert = build_certificate(mode="cold", engine={"timer": make_timer("events").describe()}, samples=[], stop="x",
                             summary=None, device=SimpleNamespace(name="NVIDIA H200"), toolchain=None,
                             outputs_before=None, outputs_after=None, sol=None)
    assert cert["timer"]["vs_ncu"]["measured"] and "+0.35 us" in cert["timer"]["vs_ncu"]["statement"]
    assert "quantity" in cert["timer"]
