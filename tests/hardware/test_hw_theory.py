"""Theoretical memory and PCIe bandwidth (BPG 8.2.1) and per-SM throughput data."""

import pytest

from cudalens.errors import InputError
from cudalens.hardware.table import known_ccs
from cudalens.hardware.theory import PCIE_GENERATIONS, memory_bandwidth, pcie_bandwidth
from cudalens.hardware.throughput import OPERATIONS, peak_ops_per_s, peaks, throughputs


def test_h100_memory_bandwidth_from_reference_numbers():
    # reference/README.md: 2619 MHz memory clock, 5120-bit bus -> 3352 GB/s
    bw = memory_bandwidth(2619e6, 5120)
    assert round(bw.gb_per_s) == 3352
    assert bw.gib_per_s == pytest.approx(bw.gb_per_s * 1e9 / 1024**3)
    assert "10^9" in bw.formula and "GiB/s" in bw.formula and "DDR" in bw.formula


def test_guide_v100_example():
    # BPG 8.2.1 worked example: 877 MHz, 4096-bit HBM2 -> 898 GB/s
    assert round(memory_bandwidth(877e6, 4096).gb_per_s) == 898


def test_memory_bandwidth_rejects_nonsense():
    with pytest.raises(InputError):
        memory_bandwidth(0, 5120)
    with pytest.raises(InputError):
        memory_bandwidth(1e9, -1)


def test_pcie_gen5_x16():
    link = pcie_bandwidth(5, 16)
    # 32 GT/s per lane, 128b/130b, 16 lanes, 8 bits per byte
    assert link.gb_per_s == pytest.approx(32 * 128 / 130 * 16 / 8)
    assert 63.0 < link.gb_per_s < 63.1
    assert link.encoding == "128b/130b" and "per direction" in link.formula


def test_pcie_gen3_x16_is_about_the_guides_16_gbs():
    # BPG quotes "16 GB/s" for PCIe x16 Gen3; the payload rate before packet overhead is 15.75
    assert pcie_bandwidth(3, 16).gb_per_s == pytest.approx(15.75, abs=0.01)


def test_pcie_encodings_by_generation():
    assert pcie_bandwidth(1, 1).gb_per_s == pytest.approx(2.5 * 0.8 / 8)
    assert pcie_bandwidth(2, 8).encoding == "8b/10b"
    for gen in (3, 4, 5):
        assert PCIE_GENERATIONS[gen].encoding == "128b/130b"
    # each generation up to 5 doubles the per-lane rate
    rates = [PCIE_GENERATIONS[g].gt_per_s for g in range(1, 7)]
    assert rates[1] == 2 * rates[0] and all(rates[i + 1] == 2 * rates[i] for i in range(2, 5))


@pytest.mark.parametrize("gen,width", [(0, 16), (7, 16), (5, 3), (4, 0)])
def test_pcie_bad_input(gen, width):
    with pytest.raises(InputError):
        pcie_bandwidth(gen, width)


def test_every_cc_has_a_full_throughput_row():
    for cc in known_ccs():
        tp = throughputs(cc)
        assert [r.key for r in tp.rates] == [op.key for op in OPERATIONS]
        for r in tp.rates:
            assert r.value is None or r.value > 0
            if r.value is None:
                assert r.note, f"{cc} {r.key}: null without a reason"


def test_throughput_values_follow_known_ratios():
    # FP32:FP64 = 2:1 on the HPC parts 6.0/7.0/8.0/9.0, 32:1 on 7.5, 64:1 on 8.6/8.9
    for cc, ratio in {"6.0": 2, "7.0": 2, "8.0": 2, "9.0": 2, "7.5": 32, "8.6": 64, "8.9": 64}.items():
        tp = throughputs(cc)
        assert tp.rate("fp32_add_mul_fma").value // tp.rate("fp64_add_mul_fma").value == ratio, cc
    assert throughputs("7.0").rate("fp64_add_mul_fma").value == 32  # 7.5 footnote does not leak
    assert throughputs("5.2").rate("int32_mul_mad").value is None  # multiple instructions
    assert throughputs("12.0").column is None


def test_h100_sxm_peak_fp32_and_fp64():
    # 132 SMs at 1980 MHz: FP32 132 x 1.98e9 x 128 x 2 = 66.9 TFLOP/s; FP64 half of that
    by_key = {p.key: p for p in peaks("9.0", 132, 1980e6)}
    assert by_key["fp32_add_mul_fma"].per_s == pytest.approx(132 * 1.98e9 * 128 * 2)
    assert by_key["fp64_add_mul_fma"].per_s == pytest.approx(by_key["fp32_add_mul_fma"].per_s / 2)
    assert by_key["fp32_add_mul_fma"].unit == "FLOP/s"
    assert by_key["int32_add_sub"].unit == "results/s"
    assert by_key["int32_add_sub"].per_s == pytest.approx(peak_ops_per_s(64, 132, 1980e6, fma=False))
    assert by_key["syncthreads"].per_s is None
