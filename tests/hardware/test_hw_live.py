"""Live device report from fake sources, throttle-reason decoding, and `cudalens device`."""

import json

import pytest

from cudalens.cli import main
from cudalens.errors import NoDeviceError
from cudalens.hardware import live
from cudalens.hardware.fakes import FakeCuda, FakeNvml, NotSupported
from cudalens.hardware.theory import memory_bandwidth, pcie_bandwidth

_REAL_QUERY = live.query_device


def fake_report(**nvml_kwargs):
    return _REAL_QUERY(0, cuda=FakeCuda(), nvml=FakeNvml(**nvml_kwargs))


# ------------------------------------------------------------------ throttle (clocks event) reasons

def test_reason_bits_match_pynvml_constants():
    pynvml = pytest.importorskip("pynvml")
    for bit, name, _ in live.CLOCK_EVENT_REASONS:
        assert getattr(pynvml, f"nvmlClocksEventReason{name}") == bit, name
    assert sum(bit for bit, _, _ in live.CLOCK_EVENT_REASONS) == pynvml.nvmlClocksEventReasonAll


def test_decode_reasons():
    assert live.decode_clock_event_reasons(0) == ()
    assert live.decode_clock_event_reasons(0x1 | 0x4 | 0x40) == (
        "GpuIdle", "SwPowerCap", "HwThermalSlowdown")
    assert live.decode_clock_event_reasons(0x8 | 0x1000) == ("HwSlowdown", "unknown(0x1000)")
    assert not live.is_throttled(("GpuIdle",))
    assert live.is_throttled(("GpuIdle", "SwPowerCap"))


# ------------------------------------------------------------------ the report

def test_report_from_fake_h100():
    rep = fake_report()
    assert rep.name == "NVIDIA H100 80GB HBM3" and rep.cc == "9.0"
    assert rep.cuda_driver_version == "13.0"
    assert rep.sm_count == 132 and rep.sm_clock_hz == 1.98e9
    assert rep.value("max_warps_per_sm") == 2048 // 32
    assert rep.memory_bandwidth == memory_bandwidth(2619e6, 5120)
    assert round(rep.memory_bandwidth.gb_per_s) == 3352
    assert rep.pcie_max == pcie_bandwidth(5, 16)
    assert rep.pcie_current == pcie_bandwidth(1, 16)
    assert rep.value("power_draw_w") == pytest.approx(71.234)
    assert rep.value("driver_version") == "580.159.04"
    assert rep.clock_event_reasons == ("GpuIdle",)
    # every reading names its source; attribute readings name the attribute they used
    for r in rep.attributes:
        assert r.source.startswith(("cuDeviceGetAttribute(", "derived"))
    assert all(r.source.startswith("NVML ") for r in rep.nvml)
    # peaks come from the throughput table and the live SM count and clock
    fp32 = next(p for p in rep.peaks if p.key == "fp32_add_mul_fma")
    assert fp32.per_s == pytest.approx(132 * 1.98e9 * 128 * 2)


def test_nvml_matched_by_pci_bus_id():
    nvml = FakeNvml()
    _REAL_QUERY(0, cuda=FakeCuda(), nvml=nvml)
    assert nvml.bus_ids == ["00000000:18:00.0"] and nvml.shutdown_called


def test_failed_queries_are_null_with_a_note():
    cuda = FakeCuda(missing={"MEMORY_CLOCK_RATE"})
    nvml = FakeNvml(unsupported={"nvmlDeviceGetClockInfo", "nvmlDeviceGetMaxPcieLinkWidth"})
    rep = live.query_device(0, cuda=cuda, nvml=nvml)
    r = rep.reading("memory_clock_rate_khz")
    assert r.value is None and "CUDA_ERROR_INVALID_VALUE" in r.note
    assert rep.memory_bandwidth is None
    assert any("memory bandwidth unknown" in n for n in rep.notes)
    assert rep.value("sm_clock_current_mhz") is None
    assert "Not Supported" in rep.reading("sm_clock_current_mhz").note
    assert rep.pcie_max is None and rep.pcie_current is not None
    assert rep.value("sm_clock_max_mhz") == 1980  # the others still there


def test_no_nvml_library_keeps_attribute_readings():
    rep = fake_report(init_error=RuntimeError("NVML Shared Library Not Found"))
    assert all(r.value is None and "NVML unavailable" in r.note for r in rep.nvml)
    assert rep.sm_count == 132 and rep.memory_bandwidth is not None


def test_throttled_clocks_get_a_note():
    rep = fake_report(reasons=0x4)
    assert rep.clock_event_reasons == ("SwPowerCap",)
    assert any("held down" in n for n in rep.notes)


def test_report_json_round_trip():
    d = json.loads(json.dumps(fake_report().to_dict()))
    assert d["memory_bandwidth"]["bus_width_bits"] == 5120
    assert {r["key"] for r in d["nvml"]} >= {"pcie_gen_max", "clocks_event_reasons"}


def test_notsupported_fake_is_an_exception():
    assert issubclass(NotSupported, Exception)


# ------------------------------------------------------------------ the command

def test_device_cc_text(capsys):
    assert main(["device", "--cc", "9.0"]) == 0
    out = capsys.readouterr().out
    assert "CC 9.0" in out and "233,472 B" in out and "Programming Guide" in out
    assert "32-bit floating-point add" in out and "sources:" in out


def test_device_cc_json_with_peaks(capsys):
    assert main(["device", "--cc", "sm_90", "--sms", "132", "--clock-mhz", "1980", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["cc"] == "9.0" and d["limits"]["smem_per_sm"] == 233472
    rates = {r["key"]: r["value"] for r in d["throughputs"]["rates"]}
    assert rates["fp32_add_mul_fma"] == 128 and rates["syncthreads"] is None
    fp64 = next(p for p in d["peaks"] if p["key"] == "fp64_add_mul_fma")
    assert fp64["per_s"] == pytest.approx(132 * 1.98e9 * 64 * 2)


@pytest.mark.parametrize("args", [["device", "--cc", "4.2"], ["device", "--cc", "nine"],
                                  ["device", "--sms", "10"]])
def test_device_bad_input_one_line_exit_2(capsys, args):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cudalens: error")


def test_device_without_gpu_is_one_line_exit_2(capsys, monkeypatch):
    def no_gpu(index=0, **kw):
        raise NoDeviceError("no NVIDIA driver found; this command needs a GPU")

    monkeypatch.setattr(live, "query_device", no_gpu)
    assert main(["device"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "GPU" in err[0]


def test_device_real_query_without_driver_is_one_line_exit_2(capsys):
    from cudalens.hardware import cuda_driver as cuda_util

    try:
        if cuda_util.device_count() > 0:
            pytest.skip("a GPU is present")
    except NoDeviceError:
        pass
    assert main(["device", "--device", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cudalens: error")


def test_device_renders_fake_report(capsys, monkeypatch):
    monkeypatch.setattr(live, "query_device", lambda index=0, **kw: fake_report(reasons=0x4))
    assert main(["device"]) == 0
    out = capsys.readouterr().out
    assert "NVIDIA H100 80GB HBM3" in out
    # theoretical DRAM and PCIe bandwidth as computed from clock, bus width, gen and width
    assert f"{memory_bandwidth(2619e6, 5120).gb_per_s:,.1f}" in out
    assert f"{pcie_bandwidth(5, 16).gb_per_s:,.2f} per direction" in out
    assert "128/130 (128b/130b)" in out and "1,980 MHz" in out
    assert "links slow down when idle" in out
    assert "cuDeviceGetAttribute(CLOCK_RATE)" in out and "NVML" in out
    assert "SwPowerCap" in out and "held down" in out


def test_device_json_from_fake_report(capsys, monkeypatch):
    monkeypatch.setattr(live, "query_device", lambda index=0, **kw: fake_report())
    assert main(["device", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["cc"] == "9.0" and round(d["memory_bandwidth"]["gb_per_s"]) == 3352
    assert d["pcie_max"]["generation"] == 5


def test_report_gives_the_one_device_facts_record():
    from cudalens.hardware.device import DeviceFacts

    facts = fake_report().facts()
    assert isinstance(facts, DeviceFacts)
    assert (facts.name, facts.cc, facts.cc_tuple, facts.arch) == ("NVIDIA H100 80GB HBM3", "9.0", (9, 0), "sm_90")
    assert facts.sm_count == 132 and facts.mem_clock_mhz == pytest.approx(2619.0) and facts.bus_width_bits == 5120
    assert facts.theoretical_bandwidth_gbs == pytest.approx(memory_bandwidth(2619e6, 5120).gb_per_s)
    assert facts.driver_version == "580.159.04" and facts.cuda_version == "13.0"
    assert DeviceFacts.from_dict(facts.to_dict()) == facts
    assert facts.max_sm_clock_mhz is not None
    no_nvml = _REAL_QUERY(0, cuda=FakeCuda(), nvml=FakeNvml(init_error=RuntimeError("no NVML"))).facts()
    assert no_nvml.max_sm_clock_mhz is None and no_nvml.driver_version == "" and no_nvml.sm_count == 132
