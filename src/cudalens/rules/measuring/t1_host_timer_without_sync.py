"""T1: Synchronize before reading host timers, or time with events."""

from __future__ import annotations

from typing import Any, Iterator

from cudalens.findings import Finding
from cudalens.rules._common import host_functions
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import rule
from cudalens.source import syntax as syn

_TIMERS = {
    "now",
    "clock",
    "gettimeofday",
    "clock_gettime",
    "omp_get_wtime",
    "QueryPerformanceCounter",
    "MPI_Wtime",
    "timespec_get",
}


_SYNCS = {
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaThreadSynchronize",
    "cudaMemcpy",
    "cudaMemcpy2D",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "synchronize",
}


_ASYNC_WORK = {
    "cudaLaunchKernel",
    "cudaLaunchCooperativeKernel",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
    "cudaGraphLaunch",
    "cuLaunchKernel",
}


@rule("T1", name="host-timer-without-sync", layers="S R")
def host_timer_without_sync(ctx: RuleContext) -> Iterator[Finding]:
    """A host timer read before the timed GPU work has finished.

    What it does:
        Flags host timer reads (`std::chrono::...::now()`, `clock()`, `gettimeofday`,
        `clock_gettime`, `omp_get_wtime`) that close an interval containing a kernel launch (or
        another asynchronous call) when no synchronizing call (`cudaDeviceSynchronize`,
        `cudaStreamSynchronize`, `cudaEventSynchronize`, a blocking `cudaMemcpy`) comes between
        the last launch and the read.

    Why it matters:
        Launches return to the host as soon as the work is queued. The host timer then measures the
        launch overhead, not the kernel: results look impossibly fast and change with whatever
        happens to synchronize later. Either synchronize before reading the timer, or time on the
        GPU with CUDA events recorded in the same stream.

    Example:
        ```cuda
        auto t0 = std::chrono::steady_clock::now();
        saxpy<<<g, b>>>(n, a, x, y);
        auto t1 = std::chrono::steady_clock::now();
        ```

    Fix:
        ```cuda
        cudaEventRecord(start); saxpy<<<g, b>>>(n, a, x, y); cudaEventRecord(stop);
        cudaEventSynchronize(stop); cudaEventElapsedTime(&ms, start, stop);
        ```
    """
    src = ctx.source
    for fn in host_functions(src):
        events: list[tuple[int, str, Any]] = []
        for c in syn.calls(fn.node):
            name = syn.call_name(c)
            if syn.is_launch(c) or name in _ASYNC_WORK:
                events.append((c.start_byte, "work", c))
            elif name in _TIMERS:
                events.append((c.start_byte, "timer", c))
            elif name in _SYNCS:
                events.append((c.start_byte, "sync", c))
        events.sort(key=lambda e: e[0])
        started = False
        pending: Any = None  # last unsynchronized launch since the last timer read
        for _, kind, node in events:
            if kind == "work":
                pending = node
            elif kind == "sync":
                pending = None
            elif kind == "timer":
                if started and pending is not None:
                    yield ctx.finding(
                        syn.line(node),
                        f"the host timer `{syn.text(node)}` is read while the launch at line {syn.line(pending)}"
                        " may still be running: it measures queuing, not execution",
                        "call cudaDeviceSynchronize() (or cudaEventSynchronize on an event after the launch)"
                        " before reading the timer, or time with CUDA events",
                        facts=(("launch_line", syn.line(pending)),),
                    )
                started = True
                pending = None
