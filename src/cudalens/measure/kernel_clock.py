"""Kernel durations from CUPTI's activity records: the GPU's own start and end timestamps of each
kernel, the same source as Nsight Systems.

CUDA events bracket more than the kernel: the events' own processing sits inside every interval,
0.96-1.34 us on an H100. The harness's default timer subtracts it (the event floor, see
measure/harness.py), which lands within 2 % of Nsight Compute's ``gpu__time_duration`` from 7.7 us
up. The activity record has no event term, which made it worth trying, but on the H100
(benchmarks/results/h100/measure/timing_probe.json) it spans less than ncu's duration does: 0.87 us
for an empty kernel where ncu reports 2.0 us, 4.3 us for a 5.2 us kernel; and with tracing on,
the 55 us and 223 us DRAM-bound kernels ran 7 % slower (their event times too). So it is opt-in
(``timer="cupti"`` or ``"auto"``); the raw event time of every sample is kept beside it.

Only kernels are timed this way: work that also copies memory must be timed with events
(``timer="events"``), which is the default of :func:`cudalens.measure.bench`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

#: Kernels of the harness itself, never counted as the user's work.
INTERNAL_KERNELS = frozenset({"cudalens_l2_flush", "cudalens_block_stream"})


@dataclass(frozen=True)
class KernelRecord:
    name: str
    start_ns: int
    end_ns: int

    @property
    def seconds(self) -> float:
        return (self.end_ns - self.start_ns) * 1e-9


def user_kernel_seconds(records: list[KernelRecord], launches: int) -> float | None:
    """Summed duration of the user's kernels in one sample, per launch; None if none was recorded."""
    mine = [r for r in records if r.name not in INTERNAL_KERNELS]
    if not mine or launches < 1:
        return None
    return sum(r.seconds for r in mine) / launches


class CuptiKernelClock:
    """Collects CONCURRENT_KERNEL activity records; ``drain()`` returns those completed so far."""

    BUFFER_BYTES = 4 << 20

    def __init__(self, cupti: Any) -> None:
        self._cupti = cupti
        self._lock = threading.Lock()
        self._records: list[KernelRecord] = []
        cupti.activity_register_callbacks(self._buffer_requested, self._buffer_completed)
        cupti.activity_enable(cupti.ActivityKind.CONCURRENT_KERNEL)

    def _buffer_requested(self) -> tuple[int, int]:
        return self.BUFFER_BYTES, 0

    def _buffer_completed(self, activities: list[Any]) -> None:
        kind = self._cupti.ActivityKind.CONCURRENT_KERNEL
        got = [KernelRecord(str(a.name), int(a.start), int(a.end)) for a in activities if a.kind == kind]
        with self._lock:
            self._records.extend(got)

    def drain(self) -> list[KernelRecord]:
        """Every kernel record completed since the last drain (forces CUPTI to flush its buffers)."""
        self._cupti.activity_flush_all(1)
        with self._lock:
            out, self._records = self._records, []
        return out

    def close(self) -> None:
        try:
            self._cupti.activity_flush_all(1)
            self._cupti.activity_disable(self._cupti.ActivityKind.CONCURRENT_KERNEL)
        except Exception:  # noqa: BLE001 - closing after a fault must not hide it
            pass


def open_kernel_clock() -> tuple[CuptiKernelClock | None, str]:
    """(clock, "") when CUPTI can record kernel activity here, else (None, why not)."""
    try:
        from cupti import cupti  # noqa: PLC0415
    except Exception as exc:  # noqa: BLE001 - not installed, or its library does not load
        return None, f"CUPTI not available ({type(exc).__name__}: {exc})"[:200]
    try:
        return CuptiKernelClock(cupti), ""
    except Exception as exc:  # noqa: BLE001 - e.g. another profiler holds CUPTI
        return None, f"CUPTI could not trace kernels ({type(exc).__name__}: {exc})"[:200]
