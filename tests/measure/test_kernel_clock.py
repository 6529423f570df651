"""The CUPTI kernel clock without a GPU: a stand-in for the cupti module delivers activity records
the way CUPTI does (through the buffer-completed callback when flushed)."""

from types import SimpleNamespace

import pytest

from cudalens.measure.kernel_clock import CuptiKernelClock, KernelRecord, user_kernel_seconds


class FakeCupti:
    ActivityKind = SimpleNamespace(CONCURRENT_KERNEL=10, MEMCPY=1)

    def __init__(self):
        self.pending = []
        self.enabled = set()

    def activity_register_callbacks(self, requested, completed):
        self.requested, self.completed = requested, completed

    def activity_enable(self, kind):
        self.enabled.add(kind)

    def activity_disable(self, kind):
        self.enabled.discard(kind)

    def activity_flush_all(self, flag):
        batch, self.pending = self.pending, []
        if batch:
            self.completed(batch)

    def launch(self, name, start, end, kind=10):
        self.pending.append(SimpleNamespace(kind=kind, name=name, start=start, end=end))


def test_records_are_drained_once_and_harness_kernels_are_not_counted():
    cupti = FakeCupti()
    clock = CuptiKernelClock(cupti)
    assert cupti.ActivityKind.CONCURRENT_KERNEL in cupti.enabled
    assert clock._buffer_requested()[0] > 0
    cupti.launch("cudalens_l2_flush", 0, 50_000)
    cupti.launch("scale", 60_000, 63_200)
    cupti.launch("scale", 64_000, 67_200)
    cupti.launch("memcpy", 70_000, 90_000, kind=cupti.ActivityKind.MEMCPY)  # not a kernel record
    records = clock.drain()
    assert [r.name for r in records] == ["cudalens_l2_flush", "scale", "scale"]
    assert user_kernel_seconds(records, launches=2) == pytest.approx(3.2e-6)
    assert clock.drain() == []
    clock.close()
    assert cupti.ActivityKind.CONCURRENT_KERNEL not in cupti.enabled


def test_no_user_kernel_means_no_kernel_time():
    assert user_kernel_seconds([KernelRecord("cudalens_block_stream", 0, 10)], launches=1) is None
    assert user_kernel_seconds([], launches=1) is None


def test_bench_timer_is_checked():
    from cudalens.errors import InputError
    from cudalens.measure.harness import _check_timer

    assert _check_timer("auto") == "auto"
    with pytest.raises(InputError, match="choose from auto, cupti, events"):
        _check_timer("stopwatch")
