"""The NVML clock readers on a fake pynvml module: which call and clock domain each asks for."""

from types import SimpleNamespace

from cudalens.measure.nvml import Nvml


def _fake(fail: bool = False) -> SimpleNamespace:
    clocks = {("now", "sm"): 1755, ("max", "sm"): 1980, ("now", "mem"): 2619}

    def reader(kind):
        def read(handle, domain):
            assert handle == "h"
            if fail:
                raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")
            return clocks[(kind, domain)]
        return read

    return SimpleNamespace(NVML_CLOCK_SM="sm", NVML_CLOCK_MEM="mem", nvmlDeviceGetClockInfo=reader("now"),
                           nvmlDeviceGetMaxClockInfo=reader("max"))


def test_each_clock_reads_its_call_and_domain():
    nv = Nvml(_fake(), "h")
    assert (nv.sm_clock(), nv.max_sm_clock(), nv.mem_clock()) == (1755.0, 1980.0, 2619.0)


def test_a_clock_nvml_cannot_give_is_none():
    nv = Nvml(_fake(fail=True), "h")
    assert (nv.sm_clock(), nv.max_sm_clock(), nv.mem_clock()) == (None, None, None)
