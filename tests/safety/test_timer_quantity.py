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
