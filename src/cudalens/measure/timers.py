"""Timers: small objects that turn one sample's event interval into seconds per launch.

NVBench has pluggable timers and stopping criteria; so has cudalens. A timer is chosen by name
(``TIMERS``) or passed as an object to ``bench``/``bench_kernel`` (anything with the methods of
:class:`Timer`). Stopping criteria are in :mod:`cudalens.measure.sampling`.

- ``events`` (default): CUDA events around the launches, less the *event floor* (the interval of an
  empty event pair, measured at the start of the run);
- ``events-raw``: the event interval as it is;
- ``graph``: hot mode only: the batch of launches is captured once into a CUDA graph and each
  sample replays it (no launch gaps between the kernels; the event floor is subtracted once per
  batch). Callables that cannot be captured (they synchronize, allocate, or use another stream)
  fall back to plain launches, noted in the result;
- ``cupti``: the kernels' own start/end from CUPTI activity records (required); ``auto``: CUPTI
  when available, else events. See measure/kernel_clock.py for what CUPTI measured on an H100
  (0.5-1.2 us shorter than ncu for kernels under 10 us; tracing slowed DRAM-bound kernels ~7 %).
"""

from __future__ import annotations

from typing import Any

from cudalens.errors import CudalensError, InputError

TIMERS = ("auto", "cupti", "events", "events-raw", "graph")


class Timer:
    """Events less the event floor. Subclasses change what is subtracted or where seconds come from."""

    name = "events"
    subtract_floor = True  # the engine measures the event floor only when a timer asks for it
    graph = False  # capture the hot batch into a CUDA graph
    notes: tuple[str, ...] = ()
    #: what the seconds are: the same quantity as ncu's gpu__time_duration, or which other one
    quantity = ("per-launch GPU time: the CUDA event interval around the launches less the empty event pair's "
                "interval (meant as ncu's gpu__time_duration; see the certificate's offset)")
    same_as_ncu = True

    def open(self) -> None:
        """Acquire what the timer needs (called once per run, after the context is current)."""

    def close(self) -> None:
        """Release it."""

    def seconds(self, interval_s: float, batch: int, floor_s: float) -> tuple[float, str]:
        """(seconds per launch, timer name actually used) for one sample."""
        return max(0.0, interval_s - floor_s) / batch, self.name

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "subtracts_event_floor": self.subtract_floor, "graph": self.graph,
                "quantity": self.quantity, "same_quantity_as_ncu_gpu_time_duration": self.same_as_ncu}


class RawEventTimer(Timer):
    name = "events-raw"
    subtract_floor = False
    quantity = ("the CUDA event interval around the launches, per launch, with the event pair's own interval "
                "left in (longer than ncu's gpu__time_duration by about that interval)")
    same_as_ncu = False

    def seconds(self, interval_s: float, batch: int, floor_s: float) -> tuple[float, str]:
        return interval_s / batch, self.name


class GraphTimer(Timer):
    name = "graph"
    graph = True
    quantity = ("per-launch GPU time of a CUDA graph replaying the batch back to back (no launch gaps), event "
                "floor subtracted once per batch: a throughput figure, not ncu's per-launch gpu__time_duration")
    same_as_ncu = False


class CuptiTimer(Timer):
    """The kernels' own durations from CUPTI; ``required=False`` falls back to events (``auto``)."""

    quantity = ("the kernel's execution span from CUPTI activity records (its start to end timestamps): a "
                "different quantity from ncu's gpu__time_duration, about 0.5-1.2 us shorter for kernels under "
                "10 us on an H100 and H200 (benchmarks/results/h100/measure/timing_probe.json)")
    same_as_ncu = False

    def __init__(self, required: bool = True) -> None:
        self.required = required
        self.clock: Any = None
        self.notes = ()
        self.name = "cupti" if required else "auto"

    def open(self) -> None:
        from cudalens.measure.kernel_clock import open_kernel_clock  # noqa: PLC0415

        self.clock, why = open_kernel_clock()
        if self.clock is None:
            if self.required:
                raise CudalensError(f"timer 'cupti' asked for, but {why}")
            self.notes = (f"timed with CUDA events: {why}",)

    def close(self) -> None:
        if self.clock is not None:
            self.clock.close()
            self.clock = None

    def seconds(self, interval_s: float, batch: int, floor_s: float) -> tuple[float, str]:
        if self.clock is not None:
            from cudalens.measure.kernel_clock import user_kernel_seconds  # noqa: PLC0415

            kernel_s = user_kernel_seconds(self.clock.drain(), batch)
            if kernel_s is not None:
                return kernel_s, "cupti"
        return max(0.0, interval_s - floor_s) / batch, "events"


def make_timer(timer: "str | Timer") -> Timer:
    """A timer object from its name (see ``TIMERS``), or the object itself."""
    if isinstance(timer, Timer) or (not isinstance(timer, str) and hasattr(timer, "seconds")):
        return timer  # type: ignore[return-value]
    if timer == "events":
        return Timer()
    if timer == "events-raw":
        return RawEventTimer()
    if timer == "graph":
        return GraphTimer()
    if timer in ("cupti", "auto"):
        return CuptiTimer(required=(timer == "cupti"))
    raise InputError(f"timer {timer!r}: choose from {', '.join(TIMERS)}")
