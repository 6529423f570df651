"""End to end on a real GPU: `cudalens device` and `cudalens bandwidth --quick`."""

import json

import pytest

from cudalens.cli import main
from cudalens.measure import bandwidth as bw

pytestmark = pytest.mark.gpu


def test_device_end_to_end(capsys):
    assert main(["device"]) == 0
    text = capsys.readouterr().out
    assert "cuDeviceGetAttribute(CLOCK_RATE)" in text
    assert main(["device", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    values = {r["key"]: r["value"] for r in d["attributes"]}
    assert values["sm_count"] > 0 and values["warp_size"] == 32
    assert d["memory_bandwidth"]["gb_per_s"] > 0
    assert d["cc"] is not None and d["total_memory_bytes"] > 0


def test_bandwidth_quick_end_to_end(capsys):
    assert main(["bandwidth", "--quick", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kernel"]["verified"] is True
    assert len(d["samples"]) == len(bw.TEST_KEYS) * len(bw.quick_sizes())
    for s in d["samples"]:
        assert s["gb_per_s"] > 0 and all(t > 0 for t in s["times_ms"])
        if s["percent_of_reference"] is not None:  # nothing beats the theoretical peak
            assert s["percent_of_reference"] < 105, s
    assert main(["bandwidth", "--quick", "--tests", "d2d_kernel"]) == 0
    assert "Summary" in capsys.readouterr().out


def test_copy_kernel_bandwidth_is_a_plausible_dram_ceiling():
    sample = bw.copy_kernel_bandwidth(256 * bw.MIB, repeats=5)
    assert sample.test == "d2d_kernel" and sample.bytes_counted == 2 * 256 * bw.MIB
    assert 20 < sample.percent_of_reference < 105
