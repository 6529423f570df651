"""Work on other devices during the samples (#17): the NVML watch with a fake device-status source."""

from dataclasses import dataclass

from cudalens.hardware.device import DeviceFacts
from cudalens.measure.certificate import build_certificate, checks_not_made
from cudalens.measure.nvml import DeviceReading, OtherDevicesWatch, judge_other_devices
from cudalens.measure.sampling import NoiseTarget, Sample, SamplingPolicy
from cudalens.measure.stats import summarize
from cudalens.measure.timers import Timer

PID = 4242
BUS = ["00000000:19:00.0", "00000000:3B:00.0", "00000000:4C:00.0"]


@dataclass
class _Proc:
    pid: int


class FakeSource:
    """Three devices; ``util[i]`` this process's SM samples on device i (None: cannot say),
    ``ctx[i]`` whether this process has a context there. Samples older than ``since`` are dropped
    as NVML does."""

    def __init__(self, util, ctx, n=3):
        self.util, self.ctx, self.n = util, ctx, n
        self.asked_since = []

    def device_indexes(self):
        return range(self.n)

    def now_us(self):
        return 1_000_000

    def bus_id(self, i):
        return BUS[i]

    def reading(self, i, pid, since_us):
        self.asked_since.append(since_us)
        u = self.util.get(i, ())
        return DeviceReading(i, self.ctx.get(i, False), None if u is None else tuple(u),
                             "not supported" if u is None else "")


def _watch(src, cuda_index=1):
    w = OtherDevicesWatch(cuda_index, source=src, pid=PID, own_bus_id="0000:3B:00.0")
    w.start()
    return w.finish()


def test_work_of_this_process_on_another_device_is_found():
    src = FakeSource({0: (0, 35, 60), 1: (99,), 2: (0,)}, {0: True, 1: True, 2: False})
    out = _watch(src)
    assert src.asked_since == [1_000_000] * 3  # only samples since the watch started
    assert out["checked"] and not out["ok"] and out["found"] == [0] and out["other_devices"] == 2
    assert "device(s) 0" in out["reason"] and "60 %" in out["reason"]


def test_the_timed_device_is_found_by_bus_id_not_by_index():
    # the timed device (CUDA index 0) is NVML device 1: its own 99 % is not "another device"
    src = FakeSource({0: (0,), 1: (99,), 2: (0,)}, {0: False, 1: True, 2: False})
    out = _watch(src, cuda_index=0)
    assert out["checked"] and out["ok"] and out["found"] == []


def test_not_checked_with_the_reason_when_nvml_cannot_tell():
    blind = _watch(FakeSource({0: None, 1: (50,), 2: (0,)}, {0: True, 1: True}))
    assert not blind["checked"] and blind["ok"] and "device(s) 0 (not supported)" in blind["reason"]
    namespace = _watch(FakeSource({0: (70,), 1: (50,)}, {0: True, 1: False}))
    assert not namespace["checked"] and "does not list this process" in namespace["reason"]
    none = OtherDevicesWatch(0, source=None)
    none.source = None
    assert none.finish() == {"checked": False, "ok": True,
                             "reason": "work on other devices not checked: NVML is not available"}


def test_one_device_has_nothing_to_watch():
    out = judge_other_devices(DeviceReading(0, True, (90,)), [])
    assert out == {"checked": True, "ok": True, "other_devices": 0, "found": [], "note": "no other device"}


def test_found_work_makes_the_certificate_suspect_and_unchecked_says_so():
    dev = DeviceFacts(name="Fake", cc="9.0", l2_bytes=50 << 20, theoretical_bandwidth_gbs=3352.3)
    samples = tuple(Sample(1e-4, 1, 1980.0) for _ in range(20))
    engine = {"timer": Timer().describe(), "flush_bytes": 0, "criterion": NoiseTarget(SamplingPolicy()).describe()}
    kw = dict(mode="hot", samples=samples, stop="converged", summary=summarize([s.seconds for s in samples]),
              device=dev, toolchain=None, outputs_before=None, outputs_after=None, sol=None)
    found = judge_other_devices(DeviceReading(1, True, ()), [DeviceReading(0, True, (40,))])
    cert = build_certificate(engine=dict(engine, other_devices=found), **kw)
    assert cert["verdict"] == "suspect" and any("device(s) 0" in r for r in cert["reasons"])
    blind = judge_other_devices(None, (), source_missing="NVML is not available")
    cert = build_certificate(engine=dict(engine, other_devices=blind), **kw)
    assert cert["verdict"] == "trusted" and not cert["checks"]["other_devices"]["checked"]
    assert "not checked" in cert["checks"]["other_devices"]["reason"]
    assert checks_not_made(cert) == ["other_devices: work on other devices not checked: NVML is not available"]


def test_bench_prints_a_check_it_could_not_make(capsys):
    from dataclasses import replace

    from cudalens.cli.bench import _render

    from ._factory import fake_result

    blind = judge_other_devices(None, (), source_missing="NVML is not available")
    r = fake_result(1e-4)
    cert = {"verdict": "trusted", "reasons": [], "checks": {"other_devices": blind, "clocks": {"checked": True, "ok": True}}}
    _render(replace(r, certificate=cert), None)
    out = capsys.readouterr().out
    assert "note: other_devices: work on other devices not checked: NVML is not available\n" in out
    assert "checks passed: clocks" in out
