import pytest
from _guided_synth import metrics

from cudalens.guided.inputs import Measurement, device_ceilings
from cudalens.guided.speed_of_light import speed_of_light
from cudalens.hardware.device import DeviceFacts
from cudalens.hardware.throughput import peaks
from cudalens.measure.throughput import Ceilings


def test_rates_shares_and_roofline_from_the_measurement():
    m = Measurement("saxpy", seconds=2.5e-4, bytes_read=8 * 2**20 * 4, bytes_written=4 * 2**20 * 4,
                    flops=2 * 4 * 2**20)
    c = Ceilings(theoretical_bandwidth_gbs=3352.0, measured_bandwidth_gbs=3000.0, theoretical_gflops=66908.0)
    s = speed_of_light(m, c)
    bw = m.bytes / m.seconds / 1e9
    gf = m.flops / m.seconds / 1e9
    assert s.bytes_source == "measurement" and s.bandwidth_gbs == pytest.approx(bw)
    assert s.pct_theoretical_bandwidth == pytest.approx(100 * bw / 3352.0)
    assert s.pct_measured_bandwidth == pytest.approx(100 * bw / 3000.0)
    assert s.pct_theoretical_flops == pytest.approx(100 * gf / 66908.0) and s.pct_measured_flops is None
    ai = m.flops / m.bytes
    assert s.arithmetic_intensity == pytest.approx(ai)
    attainable = min(66908.0e9, 3352.0e9 * ai)
    assert s.pct_of_roofline == pytest.approx(100 * gf * 1e9 / attainable)
    assert s.bound == ("memory" if 3352.0e9 * ai < 66908.0e9 else "compute")
    point = s.roofline()
    assert point == {"kernel": "saxpy", "peak_flops": pytest.approx(66908.0e9),
                     "peak_bandwidth_bytes_per_s": pytest.approx(3352.0e9), "arithmetic_intensity": pytest.approx(ai),
                     "achieved_flops": pytest.approx(gf * 1e9)}
    text = " ".join(s.lines)
    assert "GB/s" in text and "GFLOP/s" in text and "FLOP/B" in text and f"{100 * bw / 3352.0:.1f} %" in text


def test_counter_bytes_are_preferred_and_counter_flops_fill_in():
    m = Measurement("k", seconds=1e-3, bytes_read=1000, bytes_written=0, flops=0.0)
    s = speed_of_light(m, Ceilings(theoretical_bandwidth_gbs=1000.0, theoretical_gflops=10000.0),
                       metrics("k", dram_bytes=4e8, flops=1e9))
    assert s.bytes_source == "counters" and s.bytes == 4e8 and s.flops_source == "counters"
    assert s.bandwidth_gbs == pytest.approx(4e8 / 1e-3 / 1e9)
    assert s.arithmetic_intensity == pytest.approx(1e9 / 4e8)


def test_unknown_ceilings_leave_shares_and_roofline_unknown():
    s = speed_of_light(Measurement("k", seconds=1e-3, bytes_read=10**6), None)
    assert s.pct_theoretical_bandwidth is None and s.roofline() is None and s.arithmetic_intensity is None
    assert "no ceiling known" in " ".join(s.lines)
    with pytest.raises(ValueError):
        speed_of_light(Measurement("k", seconds=0.0), None)


def test_device_ceilings_use_the_throughput_table():
    info = DeviceFacts(name="H100", cc="9.0", sm_count=132, max_sm_clock_mhz=1980.0,
                      theoretical_bandwidth_gbs=3352.3)
    c = device_ceilings(info)
    fp32 = next(p for p in peaks("9.0", 132, 1980e6) if p.key == "fp32_add_mul_fma")
    assert c.theoretical_gflops == pytest.approx(fp32.per_s / 1e9)
    assert c.theoretical_bandwidth_gbs == 3352.3
    assert device_ceilings(DeviceFacts(name="x")).theoretical_gflops is None
